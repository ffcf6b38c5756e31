# awk -f sidebyside-summary.awk RESULTS — the ratios of test/sidebyside-load.sh's runs, per workload:
# kube-apiserver's (+ etcd's) figure over admitd's in the same round, the range over the rounds
# (CPU per operation, p99, peak RSS, anonymous RSS after the run: how many times less admitd
# takes; the rate: how many times more it does). Where test/h2floor ran beside them, the same
# ratios for it: the least a server on Go's net/http can take. A workload of watchers ("…, N
# watchers") beside its run without ("…, no watchers") adds, per server, the share of the rate
# the watchers leave (issue 25's (b) asks admitd for half). RESULTS lines are
# round|name|server|cpu-ms/op|peak KiB|anon KiB after|the tool's result line.
function rate(line) {
  if (match(line, /rate=[0-9.]+\/s/)) return substr(line, RSTART + 5, RLENGTH - 7) + 0
  if (match(line, /\([0-9.]+\/s/)) return substr(line, RSTART + 1, RLENGTH - 3) + 0
  return 0
}
function p99(line,   v, ms) {
  if (!match(line, /p99[= ]([0-9]+m)?[0-9.]+(ms|s|µs)/)) return 0
  v = substr(line, RSTART + 4, RLENGTH - 4)
  if (match(v, /^[0-9]+m[0-9]/)) { ms = substr(v, 1, index(v, "m") - 1) * 60000; v = substr(v, index(v, "m") + 1) }
  if (v ~ /ms$/) return ms + v
  if (v ~ /µs$/) return ms + v / 1000
  return ms + v * 1000
}
function widen(key, v) {
  if (v <= 0) return
  if (!(key in lo) || v < lo[key]) lo[key] = v
  if (!(key in hi) || v > hi[key]) hi[key] = v
}
function span(key,   l, h) {
  if (!(key in lo)) return "-"
  l = sprintf("%.1f", lo[key]); h = sprintf("%.1f", hi[key])
  return l == h ? l "×" : l "–" h "×"
}
function pspan(key,   l, h) {
  if (!(key in lo)) return "-"
  l = sprintf("%.0f", lo[key] * 100); h = sprintf("%.0f", hi[key] * 100)
  return l == h ? l "%" : l "–" h "%"
}
function ratio(a, b) { return (a > 0 && b > 0) ? a / b : 0 }
# kept w: for a workload with watchers, the share of its rate without them, per server.
function kept(w,   alone, rd, s, line, i) {
  alone = w
  if (!sub(/, [0-9]+ watchers$/, ", no watchers", alone)) return
  line = ""
  split("admitd kube-apiserver h2floor", servers, " ")
  for (i = 1; i <= 3; i++) {
    s = servers[i]
    for (rd in rounds)
      if ((rd SUBSEP w SUBSEP s) in r && (rd SUBSEP alone SUBSEP s) in r)
        widen(w SUBSEP "kept" SUBSEP s, ratio(r[rd SUBSEP w SUBSEP s], r[rd SUBSEP alone SUBSEP s]))
    if ((w SUBSEP "kept" SUBSEP s) in lo) line = line (line == "" ? "" : ", ") s " " pspan(w SUBSEP "kept" SUBSEP s)
  }
  if (line != "") printf "%-34s the rate the watchers leave: %s\n", "", line
}
BEGIN { FS = "|" }
{
  k = $1 SUBSEP $2 SUBSEP $3
  cpu[k] = $4; peak[k] = $5; anon[k] = $6; r[k] = rate($7); p[k] = p99($7)
  if (!($2 in seen)) { seen[$2] = 1; names[++n] = $2 }
  rounds[$1] = 1
}
END {
  for (i = 1; i <= n; i++) {
    w = names[i]
    for (rd in rounds) {
      a = rd SUBSEP w SUBSEP "admitd"; kas = rd SUBSEP w SUBSEP "kube-apiserver"; f = rd SUBSEP w SUBSEP "h2floor"
      d = rd SUBSEP w SUBSEP "h2floor-durable"
      if (!(a in cpu) || !(kas in cpu)) continue
      widen(w SUBSEP "cpu", ratio(cpu[kas], cpu[a]))
      widen(w SUBSEP "rate", ratio(r[a], r[kas]))
      widen(w SUBSEP "p99", ratio(p[kas], p[a]))
      widen(w SUBSEP "peak", ratio(peak[kas], peak[a]))
      widen(w SUBSEP "anon", ratio(anon[kas], anon[a]))
      if (f in cpu) {
        widen(w SUBSEP "fcpu", ratio(cpu[kas], cpu[f]))
        widen(w SUBSEP "fp99", ratio(p[kas], p[f]))
      }
      if (d in cpu) {
        widen(w SUBSEP "dcpu", ratio(cpu[kas], cpu[d]))
        widen(w SUBSEP "dp99", ratio(p[kas], p[d]))
        widen(w SUBSEP "over", ratio(cpu[a], cpu[d]))
      }
    }
    printf "%-34s CPU/op %s  rate %s  p99 %s  peak RSS %s  anon RSS after %s\n", w,
      span(w SUBSEP "cpu"), span(w SUBSEP "rate"), span(w SUBSEP "p99"), span(w SUBSEP "peak"), span(w SUBSEP "anon")
    if ((w SUBSEP "fcpu") in lo)
      printf "%-34s h2floor against kube-apiserver: CPU/op %s  p99 %s\n", "", span(w SUBSEP "fcpu"), span(w SUBSEP "fp99")
    if ((w SUBSEP "dcpu") in lo)
      printf "%-34s h2floor -durable against kube-apiserver: CPU/op %s  p99 %s; admitd's CPU/op is %s the durable floor's\n", "",
        span(w SUBSEP "dcpu"), span(w SUBSEP "dp99"), span(w SUBSEP "over")
    kept(w)
  }
}
