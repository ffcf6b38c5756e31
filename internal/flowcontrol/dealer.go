package flowcontrol

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
)

// FlowHash identifies a flow (a schema and its distinguisher) as upstream
// hashes it: the first eight bytes, little-endian, of the SHA-256 of the
// schema name, a zero byte and the distinguisher. Equal hashes deal equal
// hands, so one flow always lands in the same few queues.
func FlowHash(schema, distinguisher string) uint64 {
	h := sha256.New()
	h.Write([]byte(schema))
	h.Write([]byte{0})
	h.Write([]byte(distinguisher))
	var sum [sha256.Size]byte
	return binary.LittleEndian.Uint64(h.Sum(sum[:0]))
}

// DealHand fills hand (len(hand) ≤ deckSize) with distinct queue indices
// below deckSize drawn from hash: hash is read as a mixed-radix number whose
// i-th digit (radix deckSize-i) picks among the cards not yet dealt. The
// same hash always deals the same hand, in the same order, as upstream's
// dealer.
func DealHand(hash uint64, deckSize int, hand []int) {
	var digits [maxHandSize]int
	n := len(hand)
	for i := 0; i < n; i++ {
		radix := uint64(deckSize - i)
		digits[i] = int(hash % radix)
		hash /= radix
	}
	// A digit counts the cards not yet dealt; each earlier digit at or
	// below it moves it one card up.
	for i := 0; i < n; i++ {
		card := digits[i]
		for j := i - 1; j >= 0; j-- {
			if card >= digits[j] {
				card++
			}
		}
		hand[i] = card
	}
}

// maxHandSize bounds a hand; validation allows at most 32 cards, and the
// entropy bound keeps real hands far smaller.
const maxHandSize = 32

// dealable: a hand of handSize from deckSize queues needs no more than the
// 60 bits of hash upstream's dealer accepts.
func dealable(deckSize, handSize int) bool {
	if handSize <= 0 || handSize > deckSize || handSize > maxHandSize {
		return false
	}
	return int(math.Ceil(math.Log2(float64(deckSize))*float64(handSize))) <= 60
}
