#!/usr/bin/env bash
# mutants.sh plants the bugs listed in scripts/mutants.txt one at a time,
# runs the tests named for each, and says whether a test caught it.
#
#   scripts/mutants.sh                 every mutant, its named tests
#   scripts/mutants.sh ID...           only these mutants
#   scripts/mutants.sh -full [ID...]   the packages' whole test suites,
#                                      not only the named tests
#   scripts/mutants.sh -list           the mutants' ids and what they plant
#
# Each mutant is a sed expression applied to one file. The script checks
# that the expression changed the file (a mutant that no longer applies
# is reported STALE: the code moved, fix the expression), runs
# `go test -count=1` over its packages, restores the file byte for byte
# (also on Ctrl-C), and prints one line:
#
#   caught    ID  by TestA TestB
#   SURVIVED  ID
#   NOBUILD   ID  (the mutant does not compile: not a test of anything)
#   STALE     ID
#
# It ends with the score, caught / (caught + survived), and exits 1 when
# a mutant survived or is stale. Some tests need root (namespaces) or
# iperf3 (apt-get install iperf3 iptables); without them they skip and
# their mutants may survive. Run it from a clean tree: it edits files in
# place. See docs/testing.md.
set -uo pipefail
cd "$(dirname "$0")/.."

list=scripts/mutants.txt
full=0
only=()
for a in "$@"; do
  case "$a" in
  -full) full=1 ;;
  -list)
    awk -F': ' '/^id: /{id=$2} /^what: /{sub(/^what: /,""); printf "%-30s %s\n", id, $0}' "$list"
    exit 0
    ;;
  -*) echo "mutants.sh: unknown option $a" >&2; exit 2 ;;
  *) only+=("$a") ;;
  esac
done

backup=""
target=""
restore() {
  if [ -n "$backup" ] && [ -f "$backup" ]; then
    cp "$backup" "$target"
    rm -f "$backup"
  fi
  backup=""
}
trap 'restore; exit 130' INT TERM
trap restore EXIT

caught=0
survived=0
stale=0
nobuild=0
log=$(mktemp)

# run_one ID FILE SED PKGS RUN
run_one() {
  local id=$1 file=$2 expr=$3 pkgs=$4 run=$5
  if [ ${#only[@]} -gt 0 ]; then
    local want=0
    for o in "${only[@]}"; do [ "$o" = "$id" ] && want=1; done
    [ $want = 1 ] || return 0
  fi
  target=$file
  backup=$(mktemp)
  cp "$file" "$backup"
  if ! sed -i -e "$expr" "$file" || cmp -s "$file" "$backup"; then
    printf 'STALE     %-30s (the expression changed nothing in %s)\n' "$id" "$file"
    stale=$((stale + 1))
    restore
    return 0
  fi
  local args=(-count=1 -timeout 10m)
  if [ $full = 0 ] && [ -n "$run" ]; then
    args+=(-run "$run")
  fi
  # shellcheck disable=SC2086 # pkgs is a list of packages
  go test "${args[@]}" $pkgs >"$log" 2>&1 </dev/null
  local rc=$?
  restore
  if grep -q -e '\[build failed\]' -e '\[setup failed\]' "$log"; then
    printf 'NOBUILD   %-30s\n' "$id"
    grep -m 3 '\.go:[0-9]*:[0-9]*:' "$log" | sed 's/^/          /'
    nobuild=$((nobuild + 1))
  elif [ $rc -ne 0 ]; then
    local by
    by=$(grep -o -e '--- FAIL: [^ ]*' -e '^panic: .*' "$log" | sed 's/--- FAIL: //' | grep -v '/' | sort -u | paste -sd' ')
    printf 'caught    %-30s by %s\n' "$id" "${by:-a failing run (see go test output)}"
    caught=$((caught + 1))
  else
    printf 'SURVIVED  %-30s (%s)\n' "$id" "$(grep -c '^ok' "$log") packages passed"
    survived=$((survived + 1))
  fi
}

# value is what follows "key:" and the blanks after it.
value() {
  local v=${1#*:}
  printf '%s' "${v#"${v%%[! ]*}"}"
}

id="" file="" expr="" pkgs="" run=""
flush() {
  if [ -n "$id" ]; then
    run_one "$id" "$file" "$expr" "$pkgs" "$run"
  fi
  id="" file="" expr="" pkgs="" run=""
}
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in
  '#'*) ;;
  '') flush ;;
  id:*) id=$(value "$line") ;;
  file:*) file=$(value "$line") ;;
  sed:*) expr=$(value "$line") ;;
  pkgs:*) pkgs=$(value "$line") ;;
  run:*) run=$(value "$line") ;;
  what:*) ;;
  *) echo "mutants.sh: $list: cannot read line: $line" >&2; exit 2 ;;
  esac
done <"$list"
flush
rm -f "$log"

total=$((caught + survived))
echo "score: $caught caught of $total ($survived survived, $stale stale, $nobuild not building)"
[ $survived = 0 ] && [ $stale = 0 ]
