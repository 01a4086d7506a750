#!/usr/bin/env bash
# Parameter-table throughput: Get and Add, in keys per second, three ways:
#   sql-loop   in the server: a PL/pgSQL loop calling hopper.ps_get / ps_add (no client round trip)
#   pgbench    from SQL clients: pgbench sessions, one call per statement (prepared; each session is
#              its own worker)
#   c++        from the C++ client (client/include/hopper/kvtable.h): hopper_ps_tool processes, one
#              connection each, binary arrays
# for 1, 100 and 10,000 keys per call and 1 and 2 concurrent clients, on an ASP table (no waits:
# this measures the data path, not the consistency protocol).
#
#   bench/ps_throughput.sh [SECONDS_PER_RUN]     (default 3)
# Uses the cluster in PGHOST/PGPORT if set, else starts a throwaway one (hopper must be installed:
# make install). Prints a table and writes it to bench/results/ps_throughput.txt.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_PER_RUN=${1:-3}
BUILD=${HOPPER_PS_BUILD:-$ROOT/build/core}
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
OUT=$ROOT/bench/results/ps_throughput.txt
if [ ! -x "$BUILD/hopper_ps_tool" ]; then
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD" --target hopper_ps_tool -j2 >/dev/null
fi
if [ -z "${PGHOST:-}" ]; then
  CLUSTER=$(mktemp -d /tmp/hopper-ps-bench.XXXXXX)
  trap '"$ROOT/test/cluster.sh" stop "$CLUSTER"' EXIT
  eval "$("$ROOT/test/cluster.sh" start "$CLUSTER")"
  export PGHOST PGPORT PGUSER
fi
DB=hopper_ps_bench
WORK=$(mktemp -d /tmp/hopper-ps-bench-work.XXXXXX)
q() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
psql -X -q -d postgres -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" \
  -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
q -c "CREATE EXTENSION hopper"

SIZES="1 100 10000"
results=()
row() { results+=("$(printf '%-9s %-4s %9s %7s %12s %14s' "$@")"); echo "${results[-1]}"; }
header=$(printf '%-9s %-4s %9s %7s %12s %14s' path op keys/call clients calls/s keys/s)
echo "$header"

fresh_table() {
  q -c "SELECT hopper.ps_drop('bench', if_exists => true)" >/dev/null 2>&1 || true
  q -c "SELECT hopper.ps_create('bench', 100000, chunk_size => 100, consistency => 'asp', num_workers => 8)" >/dev/null
}

# ---- in-server loop (the DO block reports through a NOTICE) ----
fresh_table
for n in $SIZES; do
  for op in get add; do
    if [ $op = get ]; then stmt="PERFORM hopper.ps_get('bench', 0, k)"; else stmt="PERFORM hopper.ps_add('bench', 0, k, d)"; fi
    res=$(psql -X -q -At -d "$DB" 2>&1 <<SQL | sed -n 's/.*RESULT //p'
DO \$\$
DECLARE
    k bigint[] := ARRAY(SELECT generate_series(0, $n - 1)::bigint);
    d real[] := array_fill(0.001::real, ARRAY[$n]);
    calls bigint := 0;
    t0 timestamptz := clock_timestamp();
BEGIN
    WHILE clock_timestamp() - t0 < interval '$SECONDS_PER_RUN seconds' LOOP
        FOR i IN 1..16 LOOP $stmt; END LOOP;
        calls := calls + 16;
    END LOOP;
    RAISE NOTICE 'RESULT % %', calls, extract(epoch FROM clock_timestamp() - t0);
END \$\$;
SQL
    )
    read -r calls secs <<<"$res"
    row sql-loop "$op" "$n" 1 "$(awk -v c="$calls" -v s="$secs" 'BEGIN{printf "%.0f", c/s}')" \
        "$(awk -v c="$calls" -v s="$secs" -v n="$n" 'BEGIN{printf "%.0f", c*n/s}')"
  done
done

# ---- pgbench ----
for n in $SIZES; do
  keys="{$(seq -s, 0 $((n - 1)))}"
  deltas="{$(awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "%s0.001", (i ? "," : "") }')}"
  echo "SELECT hopper.ps_get('bench', :client_id, '$keys'::bigint[]);" >"$WORK/get_$n.sql"
  echo "SELECT hopper.ps_add('bench', :client_id, '$keys'::bigint[], '$deltas'::real[]);" >"$WORK/add_$n.sql"
  for clients in 1 2; do
    for op in get add; do
      fresh_table
      tps=$("$PG_BIN/pgbench" -n -M prepared -c "$clients" -j "$clients" -T "$SECONDS_PER_RUN" \
            -f "$WORK/${op}_$n.sql" "$DB" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
      row pgbench "$op" "$n" "$clients" "$(printf '%.0f' "$tps")" "$(awk -v t="$tps" -v n="$n" 'BEGIN{printf "%.0f", t*n}')"
    done
  done
done

# ---- C++ client ----
for n in $SIZES; do
  for clients in 1 2; do
    for op in get add; do
      fresh_table
      pids=()
      for w in $(seq 0 $((clients - 1))); do
        "$BUILD/hopper_ps_tool" bench "dbname=$DB" bench "$w" "$op" "$n" "$SECONDS_PER_RUN" >"$WORK/c$w.txt" &
        pids+=($!)
      done
      for p in "${pids[@]}"; do wait "$p"; done
      calls_s=0
      keys_s=0
      for w in $(seq 0 $((clients - 1))); do
        read -r _ _ calls secs kps <"$WORK/c$w.txt"
        calls_s=$(awk -v a="$calls_s" -v c="$calls" -v s="$secs" 'BEGIN{printf "%.0f", a + c/s}')
        keys_s=$(awk -v a="$keys_s" -v k="$kps" 'BEGIN{printf "%.0f", a + k}')
      done
      row c++ "$op" "$n" "$clients" "$calls_s" "$keys_s"
    done
  done
done

q -c "SELECT hopper.ps_drop('bench')" >/dev/null
psql -X -q -d postgres -c "DROP DATABASE $DB"
rm -rf "$WORK"
{
  echo "# bench/ps_throughput.sh, $(date -u +%Y-%m-%d), $SECONDS_PER_RUN s per run, $(nproc) cores ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1))"
  echo "# ASP table of 100,000 keys; keys/s = calls/s x keys per call; concurrent clients summed."
  echo "$header"
  printf '%s\n' "${results[@]}"
} >"$OUT"
echo "written to $OUT"
