#!/usr/bin/env bash
# N processes (default 8) cold-start the decode layer at once, with the disk cache off:
# total kernels compiled and wall time without a remote cache, with an empty shared Redis
# (single flight: each module compiles once), and with a warm one.
#   benchmarks/remote_cache_bench.sh [BIN_DIR (build/bin)] [N (8)] [ROUNDS (5)] [SPEC (decode)]
# Prints one line per case: kernels compiled (summed over the processes; the median
# round's), the median wall of all N from start to the last exit.
set -euo pipefail
bin="${1:-build/bin}"
n="${2:-8}"
rounds="${3:-5}"
spec="${4:-decode}"
for tool in redis-server redis-cli python3; do
  command -v "$tool" > /dev/null || { echo "$tool not found: run scripts/bootstrap.sh" >&2; exit 1; }
done
work="$(mktemp -d)"
redis_pid=""
trap '[[ -n "$redis_pid" ]] && kill "$redis_pid" 2> /dev/null; rm -rf "$work"' EXIT
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
  > "$work/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 100); do redis-cli -p "$port" ping 2> /dev/null | grep -q PONG && break; sleep 0.05; done
export GRAPHJIT_CACHE_DIR=off
# Remote code is signed with the fleet's secret (docs/SECURITY.md).
(umask 077 && head -c 32 /dev/urandom > "$work/secret")
export GRAPHJIT_CACHE_SECRET_FILE="$work/secret"

# One round: N processes at once; prints "compiled wall_ms".
round() {
  local start end pids=() sum=0
  start=$(date +%s%N)
  for i in $(seq "$n"); do
    "$bin/graphjit-dump" "$spec" --stats > "$work/out$i" 2> "$work/err$i" & pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  end=$(date +%s%N)
  for i in $(seq "$n"); do
    c="$(sed -nE 's/^# kernels: .*compiled ([0-9]+),.*/\1/p' "$work/out$i")"
    sum=$((sum + c))
  done
  echo "$sum $(( (end - start) / 1000000 ))"
}
# case NAME SETUP: ROUNDS rounds, SETUP run before each; the median by wall.
bench() {
  local name="$1" setup="$2" results=()
  for _ in $(seq "$rounds"); do
    eval "$setup"
    results+=("$(round)")
  done
  read -r compiled wall < <(printf '%s\n' "${results[@]}" | sort -n -k2 | sed -n "$(( (rounds + 1) / 2 ))p")
  printf '%-28s kernels compiled %4d   wall %6d ms   (walls: %s)\n' "$name" "$compiled" "$wall" \
    "$(printf '%s\n' "${results[@]}" | awk '{print $2}' | tr '\n' ' ')"
}
distinct="$("$bin/graphjit-dump" "$spec" --stats | sed -nE 's/^# kernels: ([0-9]+) distinct.*/\1/p')"
echo "# $n processes x '$spec' ($distinct distinct kernels each), $(nproc) cores, median of $rounds"
GRAPHJIT_REMOTE_CACHE=off bench "no remote cache" ":"
export GRAPHJIT_REMOTE_CACHE="redis://127.0.0.1:$port"
bench "remote cache, empty Redis" "redis-cli -p $port flushall > /dev/null"
bench "remote cache, warm Redis" ":"
