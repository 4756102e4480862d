#!/bin/sh
# The update feature's part of `make sizes`, in Markdown: flash and RAM of each of its parts as linked
# into the bootloader ($1/bootloader.elf) and the example application ($1/qemu-updatable.elf) of `make
# qemu-updatable`, read from their linker maps (each input object's sections that the linker kept:
# flash is code, read-only data and .data's initial values, RAM .data, .bss and the retained region),
# and each program's whole size.
out=$1
parts() {
  awk '
    function hex(s,   i, v) { v = 0; for (i = 3; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
    /^Linker script and memory map/ { on = 1; next }
    !on { next }
    /^\.[A-Za-z_.]/ { section = $1 }
    section !~ /^\.(isr_vector|note\.gnu\.build-id|text|ARM\.exidx|data|bss|retained)$/ { next }
    match($0, /0x[0-9a-f]+ +0x[0-9a-f]+ +[^ ]+\.o\)?$/) {
      n = split(substr($0, RSTART), f, / +/)
      size = hex(f[2]); object = f[3]
      part = object ~ /vendor\/ed25519\// ? "ed25519" : object ~ /src\/image\.o$/ ? "image" : \
             object ~ /src\/slots\.o$/ ? "slots" : object ~ /src\/update\.o$/ ? "update" : \
             object ~ /src\/sha256\.o$/ ? "sha256" : object ~ /qemu-mps2-an385\/slots\.o$/ ? "port" : \
             object ~ /bootloader\.o$/ ? "bootloader" : "other"
      if (section != ".bss" && section != ".retained") flash[part] += size
      if (section == ".data" || section == ".bss" || section == ".retained") ram[part] += size
    }
    END { for (p in flash) print p, flash[p] + 0, ram[p] + 0; for (p in ram) if (!(p in flash)) print p, 0, ram[p] }
  ' "$1"
}
parts "$out/bootloader.elf.map" > "$out/bootloader.parts"
parts "$out/qemu-updatable.elf.map" > "$out/qemu-updatable.parts"
whole() { arm-none-eabi-size "$1" | awk 'NR == 2 { print $1 + $2, $2 + $3 }'; }
{
  echo "whole $(whole "$out/bootloader.elf") $(whole "$out/qemu-updatable.elf")"
  for part in ed25519 image sha256 slots port update bootloader; do
    echo "$part $(awk -v p="$part" '$1 == p { print $2, $3 }' "$out/bootloader.parts") - $(awk -v p="$part" '$1 == p { print $2, $3 }' "$out/qemu-updatable.parts")"
  done
} | awk '
  function n(v,   s, r) {
    if (v == "" || v == 0) return "—"
    s = sprintf("%d", v)
    for (r = ""; length(s) > 3; s = substr(s, 1, length(s) - 3)) r = "," substr(s, length(s) - 2) r
    return s r
  }
  BEGIN {
    name["whole"] = "the whole program"
    name["ed25519"] = "Ed25519 verification (vendor/ed25519)"
    name["image"] = "image header and signature check (src/image.c)"
    name["sha256"] = "SHA-256 (src/sha256.c)"
    name["slots"] = "slots, boot choice, confirmation (src/slots.c)"
    name["port"] = "the port'"'"'s slot hooks, UART receiver, jump (ports/qemu-mps2-an385/slots.c)"
    name["update"] = "update receiver (src/update.c)"
    name["bootloader"] = "the bootloader'"'"'s own (ports/qemu-mps2-an385/bootloader.c)"
    print "| part | bootloader flash | bootloader RAM | application flash | application RAM |"
    print "| --- | ---: | ---: | ---: | ---: |"
  }
  {
    # whole: name bf br af ar; parts: name bf br - af ar (either side may be missing)
    split($0, v, " ")
    if ($1 == "whole") { bf = v[2]; br = v[3]; af = v[4]; ar = v[5] }
    else {
      bf = br = af = ar = ""
      i = 2
      if (v[i] != "-") { bf = v[i]; br = v[i + 1]; i += 2 }
      i++
      af = v[i]; ar = v[i + 1]
    }
    printf "| %s | %s | %s | %s | %s |\n", name[$1], n(bf), n(br), n(af), n(ar)
  }'
