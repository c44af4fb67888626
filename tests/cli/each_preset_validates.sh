#!/usr/bin/env bash
# Every preset printed by print-config is accepted by validate-config (exit 0).
set -euo pipefail
trainer=$1
names=$("$trainer" presets | cut -f1)
[ -n "$names" ] || { echo "no presets listed"; exit 1; }
count=0
for name in $names; do
  "$trainer" print-config --preset "$name" | "$trainer" validate-config - >/dev/null
  count=$((count + 1))
done
[ "$count" -ge 6 ] || { echo "only $count presets"; exit 1; }
echo "$count presets valid"
