#!/bin/sh
# The size table of `make sizes`, in Markdown: for each configuration `make configurations` lists on
# stdin (name, builds, options), flash (text + data) and RAM (data + bss, the retained region included)
# of the QEMU example in $1/<name>/qemu-demo.elf, and of the SDK's own objects in $1/<name>/arm/src
# (every function, before the linker drops what the example does not call), with the difference
# from the full build (listed first).
out=$1
while IFS="$(printf '\t')" read -r name builds options; do
  example=$(case $builds in *arm*) arm-none-eabi-size "$out/$name/qemu-demo.elf" | awk 'NR == 2 { print $1 + $2, $2 + $3 }' ;; *) echo "- -" ;; esac)
  sdk=$(arm-none-eabi-size -t "$out/$name"/arm/src/*.o | awk 'END { print $1 + $2, $2 + $3 }')
  printf '%s\t%s\t%s %s\n' "$name" "$options" "$example" "$sdk"
done | awk -F '\t' '
  function n(v,   s, r) {
    s = sprintf("%d", v < 0 ? -v : v)
    for (r = ""; length(s) > 3; s = substr(s, 1, length(s) - 3)) r = "," substr(s, length(s) - 2) r
    return (v < 0 ? "−" : "") s r
  }
  function cell(v, base) { if (v == "-") return "—"; if (!compared || v == base) return n(v); return n(v) " (" (v > base ? "+" : "") n(v - base) ")" }
  BEGIN { print "| configuration | example flash | example RAM | SDK flash | SDK RAM |"; print "| --- | ---: | ---: | ---: | ---: |" }
  {
    split($3, v, " ")
    if ($1 == "full") for (i = 1; i <= 4; i++) full[i] = v[i]
    compared = $1 != "full" && $1 != "minimal"
    label = compared ? $2 : $1 == "full" ? "full (the defaults)" : "minimal"
    gsub(/-D/, "", label)
    printf "| %s | %s | %s | %s | %s |\n", label, cell(v[1], full[1]), cell(v[2], full[2]), cell(v[3], full[3]), cell(v[4], full[4])
  }'
