#!/usr/bin/env bash
# Runs the conformance scenarios (../shared/conformance) both ways and
# compares: (a) through a running `admitd serve` (the harness's http target,
# under each area's server configuration from area-flags.sh) and (b) through
# `admitd eval` (evaltarget/*.go, added to a copy of the harness),
# with the harness's own scripted webhook server answering webhooks in both.
# Every scenario admitd eval can express (see notEvaluable in evaltarget.go)
# must give the same decision, status, final object, warnings, audit
# annotations and webhook calls; and those without webhook endpoints, run as
# one generated `admitd test` suite per area whose expectations are the
# running server's results, must all pass.
# Without the harness it skips, except in CI (CI=true), where it fails.
# AREAS="rbac plugins" runs only those areas.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
harness_src="${CONFORMANCE_DIR:-$repo/../shared/conformance}"
if [ ! -d "$harness_src" ]; then
  if [ "${CI:-}" = true ]; then
    echo "conformance eval: $harness_src not found (set CONFORMANCE_DIR); CI=true: failing"
    exit 1
  fi
  echo "conformance eval: $harness_src not found (set CONFORMANCE_DIR), skipping"
  exit 0
fi
work="$(mktemp -d)"
server_pid=""
stop_server() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; server_pid=""; fi
}
trap 'stop_server; rm -rf "$work"' EXIT

(cd "$repo" && go build -o "$work/admitd" ./cmd/admitd)
mkdir "$work/harness"
(cd "$harness_src" && tar --exclude=./results -cf - .) | (cd "$work/harness" && tar -xf -)
for f in "$here"/evaltarget/*.go; do
  sed '/^\/\/go:build ignore$/d' "$f" >"$work/harness/$(basename "$f")"
done
(cd "$work/harness" && go build -o "$work/conformance" .)
. "$harness_src/area-flags.sh"
"$work/conformance" tokens --scenarios "$harness_src/scenarios" --token-file "$work/tokens.csv"
write_audit_policy "$work/audit-policy.yaml"

# server_flags CONFIG: the flags of a configuration, for serve and eval alike.
# No quota controller, as the recordings of a kube-apiserver alone: the
# scenarios write quota status themselves, and a controller writing it at the
# same time makes their setup fail at random (a conflict), on either side.
server_flags() {
  local plugins authz
  plugins=$(admission_plugins_for_config "$1")
  authz=$(authz_for_config "$1")
  [ -n "$plugins" ] && echo "--enable-admission-plugins=$plugins"
  echo "--authorization-mode=$authz"
  echo "--quota-controller=false"
  # No controllers at all, as the recordings' kube-apiserver alone: admitd's
  # write through admission (as kube-controller-manager's), so a webhook
  # matching every create would see the default ServiceAccount of a namespace
  # created by a scenario, on either side, or not, as timing has it.
  echo "--controllers="
}

start_server() {
  local dir=$1; shift
  "$work/admitd" serve --data-dir "$dir/data" --secure-port 0 --token-auth-file "$work/tokens.csv" \
    --service-map "$dir/svc.json" --audit-log-path "$dir/audit.log" --audit-policy-file "$work/audit-policy.yaml" \
    --kubeconfig-out - "$@" >"$dir/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 300); do
    grep -q "serving on" "$dir/server.log" 2>/dev/null && break
    kill -0 "$server_pid" 2>/dev/null || { echo "admitd did not start: $(tail -3 "$dir/server.log")"; exit 1; }
    sleep 0.1
  done
  server_url=$(grep -o 'https://[0-9.:]*' "$dir/server.log" | head -1)
}

declare -A areas_of
test_failed=0
for a in ${AREAS:-$(cd "$harness_src/scenarios" && ls -d */ | tr -d /)}; do
  areas_of[$(config_name_for_area "$a")]+=" $a"
done
for config in $(printf '%s\n' "${!areas_of[@]}" | sort); do
  dir="$work/$config"; mkdir -p "$dir"
  mapfile -t flags < <(server_flags "$config")
  hookport=$(( 40000 + RANDOM % 20000 ))
  start_server "$dir" "${flags[@]}"
  for a in ${areas_of[$config]}; do
    for try in 1 2 3 4 5; do
      : >"$dir/http.log"
      (cd "$harness_src" && "$work/conformance" http --server "$server_url" --ca-file "$dir/data/pki/ca.crt" \
        --scenarios scenarios --results "$work/results" --settle 0s --service-map "$dir/svc.json" \
        --webhook-listen "127.0.0.1:$hookport" --audit-log "$dir/audit.log" --run "$a/" >"$dir/http.log" 2>&1) && break
      # the webhook port was taken: another one (the server re-reads the service map)
      grep -q "address already in use" "$dir/http.log" && [ "$try" -lt 5 ] || {
        echo "conformance eval: the http target failed on $a:"; tail -5 "$dir/http.log"; exit 1; }
      hookport=$(( 40000 + RANDOM % 20000 ))
    done
  done
  stop_server
  for a in ${areas_of[$config]}; do
    status=0
    (cd "$harness_src" && "$work/conformance" eval --admitd "$work/admitd" --eval-flags "${flags[*]}" \
      --http-results "$work/results/http" --test \
      --scenarios scenarios --results "$work/results" --run "$a/" >>"$dir/eval.log" 2>&1) || status=$?
    case $status in
      0) ;;
      3) test_failed=1 ;;  # an admitd test case failed: reported below
      *) echo "conformance eval: the eval target failed on $a:"; tail -5 "$dir/eval.log"; exit 1 ;;
    esac
  done
  echo "config $config (areas:${areas_of[$config]}): $(grep -c 'not evaluable offline' "$dir/eval.log" || true) scenarios not evaluable offline;" \
    "admitd test: $(grep -h '^[0-9]* cases: ' "$dir/eval.log" | awk '{c+=$1; p+=$3} END {print p+0 " of " c+0 " cases passed"}')"
  grep -A3 '^FAIL ' "$dir/eval.log" | head -40 || true
done
"$work/conformance" diff --intersect --same-setup-error --max-lines 12 "$work/results/http" "$work/results/eval" >"$work/diff.txt" 2>&1 || true
grep -v '^PASS ' "$work/diff.txt" | head -300 || true
if [ "${KEEP:-}" = 1 ]; then rm -rf "${KEEP_DIR:=/tmp/conformance-eval-results}"; cp -r "$work/results" "$KEEP_DIR"; fi
grep -q '^[0-9]* passed, 0 failed$' "$work/diff.txt" || { echo "conformance eval: admitd eval differs from the running server"; exit 1; }
[ "$test_failed" = 0 ] || { echo "conformance eval: an admitd test case differs from the running server (above)"; exit 1; }
echo "conformance eval: $(tail -1 "$work/diff.txt") (admitd eval = admitd serve)"
