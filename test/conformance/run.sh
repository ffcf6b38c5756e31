#!/usr/bin/env bash
# Runs the differential conformance harness (../shared/conformance) against
# the admitd binary and checks that every scenario listed in passing.txt
# still passes. The list only grows: add scenarios as they start passing
# (./run.sh --update rewrites it with every passing scenario). Without the
# harness it skips, except in CI (CI=true), where it fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
harness_src="${CONFORMANCE_DIR:-$repo/../shared/conformance}"
if [ ! -d "$harness_src" ]; then
  if [ "${CI:-}" = true ]; then
    echo "conformance: $harness_src not found (set CONFORMANCE_DIR); CI=true: failing"
    exit 1
  fi
  echo "conformance: $harness_src not found (set CONFORMANCE_DIR), skipping"
  exit 0
fi
work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

(cd "$repo" && go build -o "$work/admitd" ./cmd/admitd)
(cd "$harness_src" && go build -o "$work/harness" .)
"$work/harness" tokens --scenarios "$harness_src/scenarios" --token-file "$work/tokens.csv"
cat > "$work/audit-policy.yaml" <<'YAML'
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: RequestResponse
YAML

port=$(( 20000 + RANDOM % 20000 ))
hookport=$(( 40000 + RANDOM % 20000 ))
# --controllers= runs none of kube-controller-manager's controllers: the
# recordings are of a kube-apiserver alone, and admitd's controllers write
# through admission as kube-controller-manager's do, so a webhook matching
# every create would also see the default ServiceAccount and kube-root-ca.crt
# they add to a namespace a scenario creates (as on a cluster).
"$work/admitd" serve --data-dir "$work/data" --secure-port "$port" --token-auth-file "$work/tokens.csv" \
  --service-map "$work/svc.json" --audit-log-path "$work/audit.log" --audit-policy-file "$work/audit-policy.yaml" \
  --authorization-mode=AlwaysAllow --controllers= --kubeconfig-out - >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
  grep -q "serving on" "$work/server.log" && break
  sleep 0.1
done

(cd "$harness_src" && "$work/harness" http --server "https://127.0.0.1:$port" --ca-file "$work/data/pki/ca.crt" \
  --scenarios scenarios --results "$work/results" --settle 0s --service-map "$work/svc.json" \
  --webhook-listen "127.0.0.1:$hookport" --audit-log "$work/audit.log" >"$work/run.log" 2>&1) || {
  echo "conformance harness failed:"; tail -20 "$work/run.log"; exit 1; }
(cd "$harness_src" && "$work/harness" diff results/oracle "$work/results/http") >"$work/diff.txt" 2>&1 || true
tail -1 "$work/diff.txt"
grep '^PASS ' "$work/diff.txt" | awk '{print $2}' >"$work/passing.unsorted"
# Scenarios whose oracle (recorded from upstream's admission library) differs
# from the real kube-apiserver's recording (results/kas), where admitd follows
# the real server (kas-wins.txt says why for each): they pass against results/kas.
(cd "$harness_src" && "$work/harness" diff results/kas "$work/results/http") >"$work/diff-kas.txt" 2>&1 || true
grep -v '^#' "$here/kas-wins.txt" | while read -r s _; do
  [ -n "$s" ] && grep -qx "PASS $s" "$work/diff-kas.txt" && echo "$s"
done >>"$work/passing.unsorted"
sort -u "$work/passing.unsorted" >"$work/passing.txt"

if [ "${1:-}" = "--update" ]; then
  cp "$work/passing.txt" "$here/passing.txt"
  echo "conformance: passing.txt updated ($(wc -l <"$here/passing.txt") scenarios)"
  exit 0
fi
missing=$(comm -23 <(sort "$here/passing.txt") "$work/passing.txt")
if [ -n "$missing" ]; then
  echo "conformance: scenarios that passed before and fail now:"
  for m in $missing; do
    echo "  $m"
    awk -v s="FAIL $m" '$0==s{p=1;next} /^(PASS|FAIL) /{p=0} p' "$work/diff.txt" | head -8
  done
  exit 1
fi
echo "conformance: all $(wc -l <"$here/passing.txt") listed scenarios pass"
