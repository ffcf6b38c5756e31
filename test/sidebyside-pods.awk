# sidebyside-pods.awk — the summary of sidebyside-pods.sh from podsbench's RESULT lines: per
# phase and process, each round's wall time, CPU ms per pod, peak RSS and RSS growth per pod
# (medians last; admitd's also until all its pods exist, before they run), kube-apiserver + etcd + kube-controller-manager summed, and the ratios of
# the medians (kube-apiserver side / admitd).
function median(s,    a, n, i, j, t) {
  n = split(s, a, " ")
  for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
  return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
function add(k, field, v) { vals[k, field] = vals[k, field] (vals[k, field] == "" ? "" : " ") v }
function row(phase, name, k) {
  if (vals[k, "peak"] == "") { printf "%-7s %-32s %-22s %s\n", phase, name, vals[k, "s"] " (" median(vals[k, "s"]) ")", vals[k, "cpu"] " (" median(vals[k, "cpu"]) ")"; return }
  printf "%-7s %-32s %-22s %-28s %-22s %s\n", phase, name,
    vals[k, "s"] " (" median(vals[k, "s"]) ")", vals[k, "cpu"] " (" median(vals[k, "cpu"]) ")",
    vals[k, "peak"] " (" median(vals[k, "peak"]) ")", vals[k, "kib"] " (" median(vals[k, "kib"]) ")"
}
/^RESULT / {
  delete f
  for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
  k = f["phase"] SUBSEP f["proc"]
  if (!(k in seen)) { seen[k] = 1; order[++norder] = k }
  add(k, "s", sprintf("%.1f", f["seconds"]))
  add(k, "cpu", sprintf("%.2f", f["cpu_ms"] / f["pods"]))
  add(k, "peak", int(f["rss_peak_kib"] / 1024))
  add(k, "kib", sprintf("%.0f", (f["rss_peak_kib"] - f["rss_start_kib"]) / f["pods"]))
  if (f["first_cpu_ms"] != "" && f["first_seconds"] != f["seconds"]) {   # admitd: until all pods exist
    k = f["phase"] SUBSEP f["proc"] " until all created"
    if (!(k in seen)) { seen[k] = 1; order[++norder] = k }
    add(k, "s", sprintf("%.1f", f["first_seconds"])); add(k, "cpu", sprintf("%.2f", f["first_cpu_ms"] / f["pods"]))
  }
  if (f["server"] != "admitd") {   # the kube-apiserver side's processes, summed per run
    r = f["phase"] SUBSEP f["run"] SUBSEP f["seconds"]
    cpu[r] += f["cpu_ms"] / f["pods"]; peak[r] += int(f["rss_peak_kib"] / 1024)
    kib[r] += (f["rss_peak_kib"] - f["rss_start_kib"]) / f["pods"]
    if (!(r in runs)) { runs[r] = 1; runorder[++nruns] = r }
  }
}
END {
  printf "%-7s %-32s %-22s %-28s %-22s %s\n", "phase", "process", "seconds (median)", "CPU ms/pod (median)", "peak RSS MiB (median)", "RSS growth KiB/pod (median)"
  for (p = 1; p <= 2; p++) {
    phase = p == 1 ? "create" : "delete"
    for (i = 1; i <= norder; i++) { split(order[i], pk, SUBSEP); if (pk[1] == phase) row(phase, pk[2], order[i]) }
    k = phase SUBSEP "kube-apiserver+etcd+kcm"
    for (i = 1; i <= nruns; i++) {
      split(runorder[i], rk, SUBSEP)
      if (rk[1] != phase) continue
      add(k, "s", sprintf("%.1f", rk[3])); add(k, "cpu", sprintf("%.2f", cpu[runorder[i]]))
      add(k, "peak", peak[runorder[i]]); add(k, "kib", sprintf("%.0f", kib[runorder[i]]))
    }
    if (vals[k, "cpu"] == "") continue
    row(phase, "kube-apiserver+etcd+kcm", k)
    a = phase SUBSEP "admitd"
    if (vals[a, "cpu"] == "") continue
    printf "%-7s ratio (kube-apiserver side / admitd, medians): CPU per pod %.1fx, peak RSS %.1fx, RSS growth per pod %.1fx, time %.2fx\n", phase,
      median(vals[k, "cpu"]) / median(vals[a, "cpu"]), median(vals[k, "peak"]) / median(vals[a, "peak"]),
      (median(vals[a, "kib"]) > 0 ? median(vals[k, "kib"]) / median(vals[a, "kib"]) : 0), median(vals[k, "s"]) / median(vals[a, "s"])
    u = phase SUBSEP "admitd until all created"
    if (vals[u, "cpu"] != "")
      printf "%-7s ratio to admitd until all its pods exist: CPU per pod %.1fx, time %.2fx\n", phase,
        median(vals[k, "cpu"]) / median(vals[u, "cpu"]), median(vals[k, "s"]) / median(vals[u, "s"])
  }
}
