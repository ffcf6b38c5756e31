package registry

import (
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/apiserver/pkg/util/shufflesharding"
)

// Validation of PriorityLevelConfigurations, as kube-apiserver 1.37
// reports it: the handwritten checks of pkg/apis/flowcontrol/validation,
// then the declarative rules of k8s.io/api/flowcontrol/v1 (enforced by
// default, DeclarativeValidationBeta). The declarative rules say which
// of spec.exempt and spec.limited the type calls for, that a type is set,
// and which of queuing a limit response's type calls for. They take over
// the handwritten errors they repeat (same type and field), which then
// come last and without detail. They also check what the handwritten
// checks leave alone (spec.limited of a type that is not Limited, whose
// limit response they still check; a member set beside an empty or
// unknown type). On update they skip what did not change, so the
// handwritten error stands, in its place and with its detail.

// maxQueues is the most queues a priority level may have.
const maxQueues int32 = 10_000_000

var (
	supportedEnablements    = []string{"Exempt", "Limited"}
	supportedLimitResponses = []string{"Queue", "Reject"}
)

// plcErrors collects the handwritten errors of a write, each noting
// whether a declarative rule repeats it.
type plcErrors struct {
	errs field.ErrorList
}

func (e *plcErrors) add(errs ...*field.Error) { e.errs = append(e.errs, errs...) }

// covered adds an error a declarative rule repeats.
func (e *plcErrors) covered(err *field.Error) {
	e.errs = append(e.errs, err.MarkCoveredByDeclarative())
}

// merge returns the handwritten errors less those declarative repeats,
// then the declarative ones.
func (e *plcErrors) merge(declarative field.ErrorList) field.ErrorList {
	var out field.ErrorList
	for _, err := range e.errs {
		if !err.CoveredByDeclarative || !repeated(err, declarative) {
			out = append(out, err)
		}
	}
	return append(out, declarative...)
}

func repeated(err *field.Error, in field.ErrorList) bool {
	for _, d := range in {
		if d.Type == err.Type && d.Field == err.Field && d.Origin == err.Origin {
			return true
		}
	}
	return false
}

// validatePriorityLevel checks pl (old is nil on create).
func validatePriorityLevel(pl, old *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	var e plcErrors
	if _, ok := pl.Annotations[flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey]; ok {
		e.add(field.Forbidden(field.NewPath("metadata", "annotations"),
			fmt.Sprintf("annotation '%s' is forbidden", flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey)))
	}
	checkPriorityLevelSpec(&e, pl.Name, &pl.Spec)
	e.add(checkMandatoryPriorityLevel(pl)...)
	e.add(validatePriorityLevelStatus(pl.Status)...)
	var oldSpec *flowcontrolv1.PriorityLevelConfigurationSpec
	if old != nil {
		oldSpec = &old.Spec
	}
	return e.merge(declarativePriorityLevel(&pl.Spec, oldSpec))
}

func checkPriorityLevelSpec(e *plcErrors, name string, spec *flowcontrolv1.PriorityLevelConfigurationSpec) {
	if (name == flowcontrolv1.PriorityLevelConfigurationNameExempt) != (spec.Type == flowcontrolv1.PriorityLevelEnablementExempt) {
		e.add(field.Invalid(specPath.Child("type"), spec.Type, "must be 'Exempt' if and only if `name` is 'exempt'"))
	}
	switch spec.Type {
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if spec.Limited != nil {
			e.covered(field.Forbidden(specPath.Child("limited"), "must be nil if the type is not Limited"))
		}
		if x := spec.Exempt; x != nil {
			p := specPath.Child("exempt")
			if x.NominalConcurrencyShares != nil && *x.NominalConcurrencyShares < 0 {
				e.add(field.Invalid(p.Child("nominalConcurrencyShares"), *x.NominalConcurrencyShares, "must be a non-negative integer"))
			}
			e.add(checkLendable(x.LendablePercent, p)...)
		}
	case flowcontrolv1.PriorityLevelEnablementLimited:
		if spec.Exempt != nil {
			e.covered(field.Forbidden(specPath.Child("exempt"), "must be nil if the type is Limited"))
		}
		if spec.Limited == nil {
			e.covered(field.Required(specPath.Child("limited"), "must not be empty when type is Limited"))
		} else {
			checkLimited(e, spec.Limited, specPath.Child("limited"))
		}
	case "":
		e.covered(field.Required(specPath.Child("type"), ""))
	default:
		e.add(field.NotSupported(specPath.Child("type"), spec.Type, supportedEnablements))
	}
}

func checkLendable(percent *int32, p *field.Path) field.ErrorList {
	if percent != nil && (*percent < 0 || *percent > 100) {
		return field.ErrorList{field.Invalid(p.Child("lendablePercent"), *percent, "must be between 0 and 100, inclusive")}
	}
	return nil
}

func checkLimited(e *plcErrors, l *flowcontrolv1.LimitedPriorityLevelConfiguration, p *field.Path) {
	if l.NominalConcurrencyShares != nil && *l.NominalConcurrencyShares < 0 {
		e.add(field.Invalid(p.Child("nominalConcurrencyShares"), *l.NominalConcurrencyShares, "must be a non-negative integer"))
	}
	lr, lp := l.LimitResponse, p.Child("limitResponse")
	switch lr.Type {
	case flowcontrolv1.LimitResponseTypeReject:
		if lr.Queuing != nil {
			e.covered(field.Forbidden(lp.Child("queuing"), "must be nil if limited.limitResponse.type is not Limited"))
		}
	case flowcontrolv1.LimitResponseTypeQueue:
		if lr.Queuing == nil {
			e.covered(field.Required(lp.Child("queuing"), "must not be empty if limited.limitResponse.type is Limited"))
		} else {
			e.add(checkQueuing(lr.Queuing, lp.Child("queuing"))...)
		}
	case "":
		e.covered(field.Required(lp.Child("type"), ""))
	default:
		e.add(field.NotSupported(lp.Child("type"), lr.Type, supportedLimitResponses))
	}
	e.add(checkLendable(l.LendablePercent, p)...)
	if b := l.BorrowingLimitPercent; b != nil && *b < 0 {
		e.add(field.Invalid(p.Child("borrowingLimitPercent"), *b, "if specified, must be a non-negative integer"))
	}
}

// checkQueuing: positive sizes, at most maxQueues queues, and hands that
// fit the deck and the shuffle-sharding hash.
func checkQueuing(q *flowcontrolv1.QueuingConfiguration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.QueueLengthLimit <= 0 {
		errs = append(errs, field.Invalid(p.Child("queueLengthLimit"), q.QueueLengthLimit, "must be positive"))
	}
	if q.Queues <= 0 {
		errs = append(errs, field.Invalid(p.Child("queues"), q.Queues, "must be positive"))
	} else if q.Queues > maxQueues {
		errs = append(errs, field.Invalid(p.Child("queues"), q.Queues, fmt.Sprintf("must not be greater than %d", maxQueues)))
	}
	hand := p.Child("handSize")
	switch {
	case q.HandSize <= 0:
		errs = append(errs, field.Invalid(hand, q.HandSize, "must be positive"))
	case q.HandSize > q.Queues:
		errs = append(errs, field.Invalid(hand, q.HandSize, fmt.Sprintf("should not be greater than queues (%d)", q.Queues)))
	case shufflesharding.RequiredEntropyBits(int(q.Queues), int(q.HandSize)) > shufflesharding.MaxHashBits:
		errs = append(errs, field.Invalid(hand, q.HandSize, fmt.Sprintf("required entropy bits of deckSize %d and handSize %d should not be greater than %d",
			q.Queues, q.HandSize, shufflesharding.MaxHashBits)))
	}
	return errs
}

// checkMandatoryPriorityLevel: "catch-all" keeps the bootstrap spec, and
// "exempt" keeps it but for spec.exempt.
func checkMandatoryPriorityLevel(pl *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	for _, m := range bootstrap.MandatoryPriorityLevelConfigurations {
		if m.Name != pl.Name {
			continue
		}
		have, detail := pl.Spec.DeepCopy(), fmt.Sprintf("spec of '%s' must equal the fixed value", pl.Name)
		if pl.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
			have.Exempt = m.Spec.Exempt
			detail = fmt.Sprintf("spec of '%s' except the 'spec.exempt' field must equal the fixed value", pl.Name)
		}
		if !equality.Semantic.DeepEqual(&m.Spec, have) {
			return field.ErrorList{field.Invalid(specPath, internalJSON(pl.Spec), detail)}
		}
	}
	return nil
}

func validatePriorityLevelStatus(st flowcontrolv1.PriorityLevelConfigurationStatus) field.ErrorList {
	types := make([]string, len(st.Conditions))
	for i, c := range st.Conditions {
		types[i] = string(c.Type)
	}
	return validateConditionTypes(types, func(i int) any { return st.Conditions[i].Type })
}

// declarativePriorityLevel are the errors of the declarative rules (old
// is nil on create), in their order.
func declarativePriorityLevel(spec, old *flowcontrolv1.PriorityLevelConfigurationSpec) field.ErrorList {
	if old != nil && equality.Semantic.DeepEqual(spec, old) {
		return nil
	}
	var errs field.ErrorList
	sameType := old != nil && spec.Type == old.Type
	if !(sameType && equality.Semantic.DeepEqual(spec.Exempt, old.Exempt)) &&
		spec.Type != flowcontrolv1.PriorityLevelEnablementExempt && spec.Exempt != nil {
		errs = append(errs, field.Forbidden(specPath.Child("exempt"), ""))
	}
	if !(sameType && equality.Semantic.DeepEqual(spec.Limited, old.Limited)) {
		limited := spec.Type == flowcontrolv1.PriorityLevelEnablementLimited
		switch {
		case limited && spec.Limited == nil:
			errs = append(errs, field.Required(specPath.Child("limited"), ""))
		case !limited && spec.Limited != nil:
			errs = append(errs, field.Forbidden(specPath.Child("limited"), ""))
		}
	}
	if !sameType && spec.Type == "" {
		errs = append(errs, field.Required(specPath.Child("type"), ""))
	}
	if spec.Limited == nil || old != nil && equality.Semantic.DeepEqual(spec.Limited, old.Limited) {
		return errs
	}
	var oldResponse *flowcontrolv1.LimitResponse
	if old != nil && old.Limited != nil {
		oldResponse = &old.Limited.LimitResponse
	}
	return append(errs, declarativeLimitResponse(&spec.Limited.LimitResponse, oldResponse)...)
}

// declarativeLimitResponse: queuing is set exactly when the type is Queue,
// and a type is set (old is nil when there was no limited).
func declarativeLimitResponse(lr, old *flowcontrolv1.LimitResponse) field.ErrorList {
	if old != nil && equality.Semantic.DeepEqual(lr, old) {
		return nil
	}
	var errs field.ErrorList
	p := specPath.Child("limited", "limitResponse")
	// A response that changed has a new type or a new queuing, so the
	// queuing rule always runs.
	queue := lr.Type == flowcontrolv1.LimitResponseTypeQueue
	switch {
	case queue && lr.Queuing == nil:
		errs = append(errs, field.Required(p.Child("queuing"), ""))
	case !queue && lr.Queuing != nil:
		errs = append(errs, field.Forbidden(p.Child("queuing"), ""))
	}
	if !(old != nil && lr.Type == old.Type) && lr.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), ""))
	}
	return errs
}
