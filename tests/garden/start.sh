#!/usr/bin/env bash
# Start Gardener's API on 127.0.0.1 as a garden cluster serves it: etcd, a genuine kube-apiserver
# (RBAC, service-account tokens, the aggregation layer) and gardener-apiserver behind it,
# registered through APIServices, its admission plugins on. Usage:
#   start.sh BIN_DIR STATE_DIR
# BIN_DIR holds etcd, kube-apiserver and gardener-apiserver (ensure.sh prints it). STATE_DIR is
# created; it receives the admin kubeconfig, the certificates, logs, pid files and etcd-client-url.
# Extra flags for both API servers come from E2E_APISERVER_FLAGS (space-separated), e.g.
# --watch-cache=false so that every watch is served by etcd itself; for kube-apiserver alone from
# E2E_KUBE_APISERVER_FLAGS (e.g. --bind-address=0.0.0.0 so that pods reach it). On success the last line
# printed is: export KUBECONFIG=STATE_DIR/kubeconfig. Stop everything with: stop.sh STATE_DIR
set -euo pipefail
BIN=$(realpath "$1"); STATE=$(realpath -m "$2")
mkdir -p "$STATE"
PKI=$STATE/pki
started=$(date +%s.%N)

# The admission plugins upstream's own scheduler integration test switches off
# (test/integration/scheduler/shoot), and why they cannot run here:
# - DeletionConfirmation: asks for a confirmation annotation before any delete; the tests delete
#   projects, seeds and shoots as a cleanup, not as what they test.
# - ResourceReferenceManager: resolves the secrets, quotas and roles a project or binding names;
#   no controller creates them here.
# - ExtensionValidator: refuses provider, DNS and networking types that no ControllerRegistration
#   offers; no extension is installed.
# - ShootQuotaValidator: counts quota against the secret binding's quotas; none exist.
# - SeedValidator: refuses to delete seeds that still have shoots; the tests remove seeds under
#   shoots on purpose.
DISABLED_ADMISSION=${E2E_DISABLED_ADMISSION:-DeletionConfirmation,ResourceReferenceManager,ExtensionValidator,ShootQuotaValidator,SeedValidator}
# LiveControlPlaneMigration (beta, off by default) is switched on: a landscape that migrates
# control planes live does so, and `plan apply --live-migration` is tested against it.
# The token of the administrator (system:masters) in the kubeconfig this prints.
ADMIN_TOKEN=${E2E_ADMIN_TOKEN:-e2e-admin-token}

# Ports are picked at random below the kernel's ephemeral range: a port bind(0) hands out is one the
# kernel also gives to outgoing connections. A parallel test picking the same port is still
# possible; then the start is tried again on new ports.
free_port() {
  python3 - <<'PY'
import random, socket
try:
    low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except Exception:
    low = 32768
for _ in range(1000):
    p = random.randrange(10000, max(low, 12000))
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        s.close()
    print(p)
    break
PY
}
in_use() { grep -q 'address already in use' "$1"; }
alive() { kill -0 "$(cat "$STATE/$1.pid" 2>/dev/null)" 2>/dev/null; }
fail() { echo "start.sh: $1, see $STATE/$2.log" >&2; tail -20 "$STATE/$2.log" >&2; exit 1; }

# ---- certificates: one CA for serving and clients, one for the front proxy (aggregation layer)
if [ ! -s "$PKI/done" ]; then
  mkdir -p "$PKI"
  key() { openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/$1.key" 2>/dev/null; }
  ca() { key "$1"; openssl req -x509 -new -key "$PKI/$1.key" -subj "/CN=$1" -days 3650 -out "$PKI/$1.crt" 2>/dev/null; }
  # leaf NAME CA CN [SAN]
  leaf() {
    key "$1"
    openssl req -new -key "$PKI/$1.key" -subj "/CN=$3" -out "$PKI/$1.csr" 2>/dev/null
    printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=digitalSignature,keyEncipherment" \
      "extendedKeyUsage=${4:+serverAuth,}clientAuth" ${4:+"subjectAltName=$4"} >"$PKI/$1.ext"
    openssl x509 -req -in "$PKI/$1.csr" -CA "$PKI/$2.crt" -CAkey "$PKI/$2.key" -CAcreateserial \
      -days 3650 -extfile "$PKI/$1.ext" -out "$PKI/$1.crt" 2>/dev/null
  }
  ca ca
  ca front-proxy-ca
  # 10.96.0.1: the `kubernetes` Service's address, where pods reach it (the image check)
  leaf kube-apiserver ca kube-apiserver "IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes.default.svc"
  leaf gardener-apiserver ca gardener-apiserver \
    "IP:127.0.0.1,DNS:localhost,DNS:gardener-apiserver.kube-system.svc"
  leaf front-proxy-client front-proxy-ca front-proxy-client
  key service-account
  openssl ec -in "$PKI/service-account.key" -pubout -out "$PKI/service-account.pub" 2>/dev/null
  echo "$ADMIN_TOKEN,e2e-admin,e2e-admin,system:masters" >"$PKI/tokens.csv"
  echo ok >"$PKI/done"
fi

# ---- etcd
for try in 1 2 3 4 5; do
  ETCD_CLIENT=$(free_port); ETCD_PEER=$(free_port)
  [ "$ETCD_CLIENT" != "$ETCD_PEER" ] || continue
  rm -rf "$STATE"/etcd
  "$BIN"/etcd --name e2e --data-dir "$STATE"/etcd \
    --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT" --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" \
    --initial-cluster "e2e=http://127.0.0.1:$ETCD_PEER" --unsafe-no-fsync \
    --log-level warn >"$STATE"/etcd.log 2>&1 &
  echo $! >"$STATE"/etcd.pid
  for _ in $(seq 1 150); do
    curl -s -o /dev/null "http://127.0.0.1:$ETCD_CLIENT/health" && break
    alive etcd || break
    sleep 0.1
  done
  alive etcd && break
  in_use "$STATE"/etcd.log || fail "etcd exited" etcd
  echo "start.sh: a port of etcd was taken, trying again ($try)" >&2
done
alive etcd || fail "etcd did not start" etcd
echo "http://127.0.0.1:$ETCD_CLIENT" >"$STATE"/etcd-client-url

# ---- kube-apiserver, then gardener-apiserver; each tried again on new ports when one is taken
# start NAME PORT_VARIABLE COMMAND...: runs COMMAND (with the port in $PORT) until /readyz answers
api() { curl -sk -H "Authorization: Bearer $ADMIN_TOKEN" "$@"; }
serve() {
  local name=$1; shift
  : >"$STATE/$name.log"
  for try in 1 2 3 4 5; do
    PORT=$(free_port)
    "$@" --secure-port "$PORT" >>"$STATE/$name.log" 2>&1 &
    echo $! >"$STATE/$name.pid"
    for _ in $(seq 1 300); do
      [ "$(api -o /dev/null -w '%{http_code}' "https://127.0.0.1:$PORT/readyz" || true)" = 200 ] && return 0
      alive "$name" || break
      sleep 0.1
    done
    if ! alive "$name" && in_use "$STATE/$name.log" && [ "$try" -lt 5 ]; then
      echo "start.sh: the port $PORT of $name was taken, trying again ($try)" >&2
      mv "$STATE/$name.log" "$STATE/$name-try$try.log"
      continue
    fi
    alive "$name" || fail "$name exited" "$name"
    fail "$name not ready within 30 s" "$name"
  done
}
EXTRA=(${E2E_APISERVER_FLAGS:-})
KUBE_EXTRA=(${E2E_KUBE_APISERVER_FLAGS:-})

serve kube-apiserver "$BIN"/kube-apiserver \
  --etcd-servers "http://127.0.0.1:$ETCD_CLIENT" \
  --bind-address 127.0.0.1 --advertise-address 127.0.0.1 \
  --tls-cert-file "$PKI"/kube-apiserver.crt --tls-private-key-file "$PKI"/kube-apiserver.key \
  --client-ca-file "$PKI"/ca.crt --token-auth-file "$PKI"/tokens.csv \
  --authorization-mode RBAC \
  --service-account-issuer https://kubernetes.default.svc \
  --service-account-key-file "$PKI"/service-account.pub \
  --service-account-signing-key-file "$PKI"/service-account.key \
  --service-cluster-ip-range 10.96.0.0/12 \
  --requestheader-client-ca-file "$PKI"/front-proxy-ca.crt \
  --requestheader-allowed-names front-proxy-client \
  --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
  --requestheader-extra-headers-prefix X-Remote-Extra- \
  --proxy-client-cert-file "$PKI"/front-proxy-client.crt \
  --proxy-client-key-file "$PKI"/front-proxy-client.key \
  --cert-dir "$STATE"/certs "${EXTRA[@]}" "${KUBE_EXTRA[@]}"
KUBE_PORT=$PORT

cat >"$STATE"/kubeconfig <<EOF
apiVersion: v1
kind: Config
clusters:
- name: garden
  cluster: {server: "https://127.0.0.1:$KUBE_PORT", certificate-authority: "$PKI/ca.crt"}
users:
- name: admin
  user: {token: $ADMIN_TOKEN}
contexts:
- name: garden
  context: {cluster: garden, user: admin, namespace: default}
current-context: garden
EOF

serve gardener-apiserver "$BIN"/gardener-apiserver \
  --etcd-servers "http://127.0.0.1:$ETCD_CLIENT" \
  --bind-address 127.0.0.1 \
  --tls-cert-file "$PKI"/gardener-apiserver.crt --tls-private-key-file "$PKI"/gardener-apiserver.key \
  --cluster-identity e2e \
  --authorization-always-allow-paths /healthz,/readyz,/livez \
  --authentication-kubeconfig "$STATE"/kubeconfig --authorization-kubeconfig "$STATE"/kubeconfig \
  --kubeconfig "$STATE"/kubeconfig \
  --disable-admission-plugins "$DISABLED_ADMISSION" \
  --feature-gates LiveControlPlaneMigration=true "${EXTRA[@]}"
GARDENER_PORT=$PORT

# ---- register gardener-apiserver with the aggregation layer, one APIService per group version
# it serves (read from its own discovery), and wait until the garden cluster serves them all
KUBE=https://127.0.0.1:$KUBE_PORT
post() {
  local code
  code=$(api -o "$STATE"/post.out -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    --data "$2" "$KUBE$1")
  case $code in 201|409) ;; *) echo "start.sh: POST $1 gave HTTP $code" >&2; cat "$STATE"/post.out >&2; exit 1 ;; esac
}
post /api/v1/namespaces/kube-system/services \
  '{"apiVersion":"v1","kind":"Service","metadata":{"name":"gardener-apiserver","namespace":"kube-system"},"spec":{"type":"ExternalName","externalName":"localhost"}}'
CA_BUNDLE=$(base64 -w0 <"$PKI"/ca.crt)
GROUP_VERSIONS=$(api "https://127.0.0.1:$GARDENER_PORT/apis" |
  python3 -c 'import json,sys; print(" ".join(v["groupVersion"] for g in json.load(sys.stdin)["groups"] for v in g["versions"]))')
[ -n "$GROUP_VERSIONS" ] || { echo "start.sh: gardener-apiserver's discovery lists no group" >&2; exit 1; }
for gv in $GROUP_VERSIONS; do
  group=${gv%/*}; version=${gv#*/}
  post /apis/apiregistration.k8s.io/v1/apiservices "$(printf '{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"%s.%s"},"spec":{"group":"%s","version":"%s","groupPriorityMinimum":100,"versionPriority":100,"caBundle":"%s","service":{"name":"gardener-apiserver","namespace":"kube-system","port":%s}}}' \
    "$version" "$group" "$group" "$version" "$CA_BUNDLE" "$GARDENER_PORT")"
done
for _ in $(seq 1 300); do
  missing=
  for gv in $GROUP_VERSIONS; do
    [ "$(api -o /dev/null -w '%{http_code}' "$KUBE/apis/$gv")" = 200 ] || { missing=$gv; break; }
  done
  [ -z "$missing" ] && [ "$(api -o /dev/null -w '%{http_code}' "$KUBE/apis/core.gardener.cloud/v1beta1/shoots?limit=1")" = 200 ] && break
  sleep 0.1
done
[ -z "$missing" ] || { echo "start.sh: $missing not served through kube-apiserver within 30 s" >&2; exit 1; }

# the default and garden namespaces, as a garden cluster has them
post /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"garden"}}'
echo "$KUBE" >"$STATE"/kube-apiserver-url
echo "https://127.0.0.1:$GARDENER_PORT" >"$STATE"/gardener-apiserver-url
echo "Gardener API ready on $KUBE in $(awk "BEGIN {printf \"%.1f\", $(date +%s.%N) - $started}") s (state in $STATE)"
echo "export KUBECONFIG=$STATE/kubeconfig"
