#!/usr/bin/env bash
# The faults of test/cli/faults.test.ts, once against a real kube-apiserver (../shared/k8s-local).
# Run it under the shared lock:  flock /tmp/k8s-local.lock test/cli/faults-real-api-server.sh
#
# The cluster has no kubelet: the folder is dist/ without its two webhook configurations (no Pod
# would answer them), applied with --no-wait, beside stand-in CRDs of APIRule and Subscription.
#   A: kube-apiserver killed (kill -9) 0.3 s into wave -1, started again 5 s later over the same etcd.
#   B: the same kill, not started again within --retry-timeout 5s; then started; rerun with --prune.
#   C: SIGINT (Ctrl-C) 0.5 s into wave -1 of a run with one change; rerun with --prune.
# Each ends with reruns (and a diff) that must change nothing. Output: $OUT/*.log, $OUT/events.log.
set -u
cd "$(dirname "$0")/../.."
export CDK8S_CHECK_UPGRADE=false KUBECONFIG=/tmp/k8s-bin/kubeconfig
OUT=${OUT:-$(mktemp -d /tmp/faults-real-XXXX)}
DIST=$OUT/dist; mkdir -p "$DIST"
cp dist/*.yaml "$DIST"/
node -e "
const Y = require('yaml'); const fs = require('fs'); const f = process.argv[1];
const docs = Y.parseAllDocuments(fs.readFileSync(f, 'utf8')).filter(d => !/WebhookConfiguration$/.test(d.get('kind')));
fs.writeFileSync(f, docs.map(d => d.toString()).join('---\n'));" "$DIST/0000-serverless.k8s.yaml"
cat > "$OUT/module-crds.yaml" <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: apirules.gateway.kyma-project.io }
spec:
  group: gateway.kyma-project.io
  scope: Namespaced
  names: { kind: APIRule, plural: apirules, singular: apirule, listKind: APIRuleList }
  versions: [{ name: v2, served: true, storage: true, schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } } }]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: subscriptions.eventing.kyma-project.io }
spec:
  group: eventing.kyma-project.io
  scope: Namespaced
  names: { kind: Subscription, plural: subscriptions, singular: subscription, listKind: SubscriptionList }
  versions: [{ name: v1alpha2, served: true, storage: true, schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } } }]
YAML
ks() { node bin/kyma-serverless.js "$@"; }
t() { echo "$(echo "$(date +%s.%N) - $start" | bc)"; }
log() { echo "$*" | tee -a "$OUT/events.log"; }
# Waits until an apply's log reaches wave -1, then 0.3 s more.
into_wave() { until grep -q "wave -1, built-in kinds" "$1" 2>/dev/null || ! kill -0 "$2" 2>/dev/null; do sleep 0.05; done; sleep "${3:-0.3}"; }
kill_apiserver() { APID=$(sed -n 2p /tmp/k8s-bin/pids); tr '\0' '\n' < /proc/$APID/cmdline > "$OUT/apiserver.cmd"; kill -9 "$APID"; }
start_apiserver() {
  mapfile -t ARGS < "$OUT/apiserver.cmd"
  setsid "${ARGS[@]}" >> /tmp/k8s-bin/logs/kube-apiserver.log 2>&1 < /dev/null &
  sed -i "s/^$APID\$/$!/" /tmp/k8s-bin/pids
  until kubectl get --raw /readyz >/dev/null 2>&1; do sleep 0.2; done
}
fresh() {
  /tmp/k8s-bin/up.sh --clean > "$OUT/up-$1.log" 2>&1 || { log "up.sh failed"; /tmp/k8s-bin/down.sh --clean; exit 1; }
  kubectl apply -f "$OUT/module-crds.yaml" > /dev/null && kubectl wait --for condition=Established crd --all --timeout 60s > /dev/null
}
trap '/tmp/k8s-bin/down.sh --clean > "$OUT/down.log" 2>&1' EXIT

fresh A; start=$(date +%s.%N)
ks apply "$DIST" --no-wait --retry-timeout 90s > "$OUT/a1.log" 2>&1 & P=$!
into_wave "$OUT/a1.log" $P; kill_apiserver; log "A: killed at +$(t)s"; sleep 5; start_apiserver; log "A: readyz at +$(t)s"
wait $P; log "A: run 1 exit $? at +$(t)s"
ks apply "$DIST" --no-wait > "$OUT/a2.log" 2>&1; log "A: run 2 exit $?"
ks apply "$DIST" --no-wait --prune > "$OUT/a3.log" 2>&1; log "A: run 3 (--prune) exit $?"
ks diff "$DIST" > "$OUT/a-diff.log" 2>&1; log "A: diff exit $?"

fresh B; start=$(date +%s.%N)
ks apply "$DIST" --no-wait --prune --retry-timeout 5s > "$OUT/b1.log" 2>&1 & P=$!
into_wave "$OUT/b1.log" $P; kill_apiserver; log "B: killed at +$(t)s"
wait $P; log "B: run 1 exit $? at +$(t)s"; start_apiserver; log "B: readyz at +$(t)s"
ks apply "$DIST" --no-wait --prune > "$OUT/b2.log" 2>&1; log "B: run 2 exit $?"
ks apply "$DIST" --no-wait --prune > "$OUT/b3.log" 2>&1; log "B: run 3 exit $?"

cp -r "$DIST" "$OUT/dist-c"; sed -i '0,/logLevel: info/s//logLevel: debug/' "$OUT/dist-c/0000-serverless.k8s.yaml"
start=$(date +%s.%N)
# node itself in the background (not the function ks, whose subshell would get the signal).
node bin/kyma-serverless.js apply "$OUT/dist-c" --no-wait --prune > "$OUT/c1.log" 2>&1 & P=$!
into_wave "$OUT/c1.log" $P 0.5; kill -INT $P; log "C: SIGINT at +$(t)s"
wait $P; log "C: run 1 exit $? at +$(t)s"
ks apply "$OUT/dist-c" --no-wait --prune > "$OUT/c2.log" 2>&1; log "C: run 2 exit $?"
ks diff "$OUT/dist-c" > "$OUT/c-diff.log" 2>&1; log "C: diff exit $?"
grep -h "^Applied\|^kyma-serverless: \|^not applied\|^--prune" "$OUT"/*.log | tee -a "$OUT/events.log"
