#!/usr/bin/env bash
# The remote (Redis) code cache across processes, with the disk cache off so only Redis
# is shared: a second process compiles no kernel; four processes started together compile
# each module once; Redis down at start, stopped (never answering), killed while processes
# wait on it; a corrupt or truncated value; a lock left by a dead holder (expiring, and
# outlasting the bounded wait); values signed under another secret, no secret at all, a
# password file others can read: every run succeeds with the right outputs, never hangs,
# never loads bad or unsigned code. (A bare `wait` would wait for redis-server too: each wait names
# its processes.)
set -euo pipefail
bin="$1"
fail() { echo "FAIL: $*" >&2; exit 1; }
for tool in redis-server redis-cli python3; do
  command -v "$tool" > /dev/null ||
    fail "$tool not found: run scripts/bootstrap.sh (it installs redis-server and python3)"
done
work="$(mktemp -d)"
redis_pid=""
stop_redis() {
  if [[ -n "$redis_pid" ]]; then kill -9 "$redis_pid" 2> /dev/null || true; wait "$redis_pid" 2> /dev/null || true; fi
  redis_pid=""
}
trap 'stop_redis; rm -rf "$work"' EXIT
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
port="$(free_port)"
start_redis() {
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
    > "$work/redis.log" 2>&1 &
  redis_pid=$!
  for _ in $(seq 100); do
    redis-cli -p "$port" ping 2> /dev/null | grep -q PONG && return 0
    sleep 0.05
  done
  fail "redis-server did not start on port $port: $(cat "$work/redis.log")"
}
rcli() { redis-cli -p "$port" "$@"; }
value_keys() { rcli --scan --pattern 'graphjit:code:*' | grep -v ':lock$' || true; }

export GRAPHJIT_CACHE_DIR=off
export GRAPHJIT_REMOTE_CACHE="redis://127.0.0.1:$port"
# The fleet's secret (docs/SECURITY.md): owner-only, or it is refused.
(umask 077 && head -c 32 /dev/urandom > "$work/secret" && head -c 32 /dev/urandom > "$work/other")
export GRAPHJIT_CACHE_SECRET_FILE="$work/secret"
pass=0
ok() { pass=$((pass + 1)); }
spec="decode:d=32,H=4,G=2,dh=8,f=64"
stats() { "$bin/graphjit-dump" "$spec" --dim S=7 --bind P=6 --stats "$@" | grep -E '^# (kernels|remote cache):'; }
field() {  # field NAME TEXT: the number after NAME
  echo "$2" | sed -nE "s/.*[ ,;]$1 ([0-9]+).*/\1/p" | head -1
}
run() {  # run DIR [env...]: graphjit-run's outputs in DIR, stderr in DIR.err
  local dir="$1"; shift
  env "$@" "$bin/graphjit-run" "$spec" --dim S=7 --bind P=6 --mode=jit --output-dir "$dir" \
    > /dev/null 2> "$dir.err" || fail "graphjit-run ($*) failed: $(cat "$dir.err")"
}
same() { cmp -s "$work/ref/output0.npy" "$1/output0.npy" || fail "$2: outputs differ"; ok; }
one_warning() {
  local n
  n="$(grep -c '^graphjit: remote cache' "$1" || true)"
  [[ "$n" == 1 ]] || fail "$2: $n remote cache warnings (want 1): $(cat "$1")"; ok
}

run "$work/ref" GRAPHJIT_REMOTE_CACHE=off
start_redis

# 1. Two processes: the second fetches everything.
cold="$(stats)"
distinct="$(field distinct "$(echo "$cold" | sed -E 's/^# kernels: ([0-9]+) distinct/ distinct \1/')")"
modules="$(echo "$cold" | sed -nE 's/.*; ([0-9]+) modules on.*/\1/p')"
[[ "$(field compiled "$cold")" == "$distinct" && "$(field misses "$cold")" == "$modules" ]] ||
  fail "cold: $cold"; ok
[[ "$(value_keys | wc -l)" == "$modules" ]] || fail "cold: $(value_keys | wc -l) values for $modules modules"; ok
[[ -z "$(rcli --scan --pattern '*:lock')" ]] || fail "cold: locks left behind"; ok
warm="$(stats)"
[[ "$(field compiled "$warm")" == 0 && "$(field fetched "$warm")" == "$distinct" &&
   "$(field hits "$warm")" == "$modules" ]] || fail "warm: $warm"; ok
run "$work/warm"; same "$work/warm" "warm"

# 2. Four processes started together on an empty Redis: each module compiles once.
rcli flushall > /dev/null
pids=()
for i in 1 2 3 4; do stats > "$work/p$i.stats" & pids+=($!); done
for p in "${pids[@]}"; do wait "$p"; done
sum=0
for i in 1 2 3 4; do sum=$((sum + $(field compiled "$(cat "$work/p$i.stats")"))); done
[[ "$sum" == "$distinct" ]] ||
  fail "4 processes compiled $sum kernels, one compiles $distinct: $(cat "$work"/p?.stats)"; ok
rcli flushall > /dev/null
pids=()
for i in 1 2 3 4; do run "$work/r$i" & pids+=($!); done
for p in "${pids[@]}"; do wait "$p"; done
for i in 1 2 3 4; do same "$work/r$i" "concurrent $i"; done

# 3. A remote hit is stored on disk too: with Redis down, that disk alone serves.
run "$work/disk1" GRAPHJIT_CACHE_DIR="$work/disk"
[[ "$(ls "$work/disk"/*.gjcode 2> /dev/null | wc -l)" -ge 1 ]] || fail "no disk files from remote hits"; ok

# 4. Corrupt and truncated values: ignored (logged), recompiled, replaced.
run "$work/fill"
for damage in garbage truncate; do
  for k in $(value_keys); do
    case "$damage" in
      garbage) rcli set "$k" "GJCODE this is not code" > /dev/null ;;
      # (GETRANGE, not `GET | head`: redis-cli's SIGPIPE would fail the pipeline.)
      truncate) rcli --raw getrange "$k" 0 59 | rcli -x set "$k" > /dev/null ;;
    esac
  done
  run "$work/$damage" GRAPHJIT_LOG=cache
  grep -q 'ignored, recompiling' "$work/$damage.err" || fail "$damage: not reported: $(cat "$work/$damage.err")"; ok
  same "$work/$damage" "$damage"
  again="$(stats)"
  [[ "$(field compiled "$again")" == 0 ]] || fail "$damage: values not replaced: $again"; ok
done

# 5. A lock left by a dead process: the waiter takes over when it expires ...
rcli flushall > /dev/null
run "$work/fill2"; stats > /dev/null
keys="$(value_keys)"
rcli flushall > /dev/null
for k in $keys; do rcli set "$k:lock" dead-holder px 1500 > /dev/null; done
start=$(date +%s%N)
waited="$(stats)"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[[ "$(field waits "$waited")" -ge 1 && "$(field compiled "$waited")" == "$distinct" &&
   "$(field fallbacks "$waited")" == 0 ]] || fail "expired lock: $waited"; ok
[[ "$ms" -ge 1000 && "$ms" -lt 15000 ]] || fail "expired lock: waited $ms ms"; ok
# ... or, when it outlives the bounded wait, compiles without it.
rcli flushall > /dev/null
for k in $keys; do rcli set "$k:lock" dead-holder px 60000 > /dev/null; done
start=$(date +%s%N)
bounded="$(GRAPHJIT_REMOTE_CACHE_LOCK_WAIT_MS=300 stats)"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[[ "$(field compiled "$bounded")" == "$distinct" && "$(field fallbacks "$bounded")" == "$modules" ]] ||
  fail "bounded wait: $bounded"; ok
[[ "$ms" -lt 10000 ]] || fail "bounded wait took $ms ms"; ok
run "$work/bounded" GRAPHJIT_REMOTE_CACHE_LOCK_WAIT_MS=300; same "$work/bounded" "bounded wait"

# 5b. A Redis that accepts but never answers (stopped): the command timeout bounds it.
rcli flushall > /dev/null
kill -STOP "$redis_pid"
start=$(date +%s%N)
run "$work/stopped"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
kill -CONT "$redis_pid"
[[ "$ms" -lt 5000 ]] || fail "a stopped Redis held a process for $ms ms"; ok
one_warning "$work/stopped.err" "stopped"
same "$work/stopped" "stopped"

# 5c. Values signed under another secret: every one refused (one warning), compiled here,
# the same outputs. Without a secret the remote tier is refused, saying how to set one;
# a password file others can read is refused naming its mode.
rcli flushall > /dev/null
stats > /dev/null
foreign="$(GRAPHJIT_CACHE_SECRET_FILE="$work/other" stats 2> "$work/foreign.err")"
[[ "$(field compiled "$foreign")" == "$distinct" && "$(field hits "$foreign")" == 0 ]] ||
  fail "another secret's values were loaded: $foreign"; ok
n="$(grep -c 'refused cached code.*signature mismatch' "$work/foreign.err" || true)"
[[ "$n" == 1 ]] || fail "another secret: $n warnings (want 1): $(cat "$work/foreign.err")"; ok
run "$work/foreign" GRAPHJIT_CACHE_SECRET_FILE="$work/other"; same "$work/foreign" "another secret"
run "$work/nosecret" GRAPHJIT_CACHE_SECRET_FILE=
grep -q 'no cache secret.*GRAPHJIT_CACHE_SECRET_FILE' "$work/nosecret.err" ||
  fail "no secret: not reported: $(cat "$work/nosecret.err")"; ok
same "$work/nosecret" "no secret"
chmod 644 "$work/other"
run "$work/badpass" GRAPHJIT_REMOTE_CACHE_PASSWORD_FILE="$work/other"
grep -q "password file.*$work/other.*mode 0644" "$work/badpass.err" ||
  fail "a readable password file: not refused: $(cat "$work/badpass.err")"; ok
same "$work/badpass" "readable password file"

# 6. Redis killed while four processes wait on locks: each falls back, one warning each.
rcli flushall > /dev/null
for k in $keys; do rcli set "$k:lock" dead-holder px 60000 > /dev/null; done
pids=()
for i in 1 2 3 4; do run "$work/k$i" & pids+=($!); done
sleep 0.5
stop_redis
start=$(date +%s%N)
for p in "${pids[@]}"; do wait "$p" || fail "a process failed after Redis was killed"; done
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[[ "$ms" -lt 10000 ]] || fail "processes took $ms ms after Redis was killed"; ok
for i in 1 2 3 4; do same "$work/k$i" "killed $i"; one_warning "$work/k$i.err" "killed $i"; done

# 7. Redis down at start (nothing listens on the port): one warning, right outputs.
run "$work/down"
one_warning "$work/down.err" "down"
same "$work/down" "down"
down="$(stats 2> /dev/null)"
[[ "$(field compiled "$down")" == "$distinct" && "$(field fallbacks "$down")" == "$modules" ]] ||
  fail "down: $down"; ok
# ... and the disk files of the remote hits (3.) serve alone.
fromdisk="$(GRAPHJIT_CACHE_DIR="$work/disk" "$bin/graphjit-run" "$spec" --dim S=7 --bind P=6 \
  --mode=jit --output-dir "$work/disk2" 2>&1 > /dev/null)" || fail "disk after remote: $fromdisk"
same "$work/disk2" "disk after remote"

echo "remote cache: $pass checks passed"
