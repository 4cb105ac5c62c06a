#!/usr/bin/env bash
# Stop what start.sh started in STATE_DIR (by the pids it recorded), the API servers before etcd;
# removes nothing else. Usage: stop.sh STATE_DIR
STATE=$1
for p in gardener-apiserver kube-apiserver etcd; do
  f="$STATE/$p.pid"
  [ -f "$f" ] || continue
  pid=$(cat "$f")
  kill "$pid" 2>/dev/null && for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$f"
done
