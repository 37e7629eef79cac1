#!/usr/bin/env bash
# halo compare --idiff-exit-codes against OpenImageIO's idiff itself, case by case: the same
# exit code and the same verdict (halo names a size or channel mismatch NOT_COMPARABLE where idiff
# says FAILURE; both exit 2) on thresholds, allowances, sizes, channels and missing files,
# in idiff's single-dash spelling. Needs idiff and oiiotool (openimageio-tools).
# Usage: tests/cli/idiff_agree.sh HALO
set -uo pipefail
halo=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
# a and d differ by 0.1 in R on every pixel of 8x8; b is wider, c has alpha.
oiiotool --pattern constant:color=0.5,0.5,0.5 8x8 3 -o a.exr
oiiotool --pattern constant:color=0.6,0.5,0.5 8x8 3 -o d.exr
oiiotool --pattern constant:color=0.5,0.5,0.5 9x8 3 -o b.exr
oiiotool --pattern constant:color=0.5,0.5,0.5,1 8x8 4 -o c.exr
# e differs from a by 0.1 on 8 pixels of 64 (one row), by 0.01 on the rest.
oiiotool --pattern constant:color=0.6,0.5,0.5 8x1 3 \
  --pattern constant:color=0.51,0.5,0.5 8x8 3 --paste +0+3 -o e.exr

failures=0
check() {  # check "OPTIONS" A B
  idiff $1 "$2" "$3" >idiff.out 2>&1
  local want=$? verdict
  verdict=$(grep -oE '^(PASS|WARNING|FAILURE)$' idiff.out | tail -1)
  "$halo" compare --idiff-exit-codes $1 "$2" "$3" >halo.out 2>&1
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: compare $1 $2 $3: halo exits $got, idiff $want ($verdict)"
    failures=$((failures + 1))
  elif [ -n "$verdict" ] && ! grep -q "$verdict" halo.out && ! grep -q NOT_COMPARABLE halo.out; then
    echo "FAIL: compare $1 $2 $3: idiff says $verdict, halo: $(tr '\n' ' ' <halo.out)"
    failures=$((failures + 1))
  fi
}
for options in "" "-fail 0.2" "-warn 0.05 -fail 0.2" "-fail 1 -hardfail 0.05" \
  "-fail 0.05 -failpercent 200" "-fail 0.05 -failpercent 100" "-fail 0.05 -failpercent 99" \
  "-fail 0.05 -allowfailures 64" "-fail 0.05 -allowfailures 63" \
  "-fail 0.05 -failpercent 50 -allowfailures 100" "-fail 0.05 -failpercent 200 -hardfail 0.05" \
  "-fail 0.05 -failpercent 200 -warn 0.5" "-fail 0.05 -failpercent 200 -warnpercent 100" \
  "-fail 0.05 -failpercent 200 -warn 0.5 -hardwarn 0.05" \
  "-fail 0.05 -failrelative 0.5 -failpercent 200" "-fail 0.05 -failrelative 0.1"; do
  check "$options" a.exr d.exr
done
for options in "-fail 0.05" "-fail 0.05 -failpercent 12.5" "-fail 0.05 -failpercent 12.4" \
  "-fail 0.05 -allowfailures 8" "-fail 0.05 -failpercent 20 -warn 0.005 -warnpercent 90" \
  "-fail 0.05 -failpercent 20 -warn 0.005 -warnpercent 100" "-fail 0.005 -failpercent 50" \
  "-fail 0.05 -failpercent 20 -hardwarn 0.05" "-fail 0.05 -failpercent 20 -hardwarn 0.2"; do
  check "$options" a.exr e.exr
done
check "" a.exr a.exr
check "" a.exr b.exr        # sizes differ
check "" a.exr c.exr        # channels differ
check "" a.exr missing.exr  # no such file
# Difference images as idiff writes them: a - b (|a - b| with -abs, times -scale), whatever
# the verdict, and with -od only when the images differ at all.
diff_image() {  # diff_image "OPTIONS" A B
  rm -f idiff-d.exr halo-d.exr
  idiff $1 -o idiff-d.exr "$2" "$3" >/dev/null 2>&1
  "$halo" compare --idiff-exit-codes $1 -o halo-d.exr "$2" "$3" >/dev/null 2>&1
  if [ -e idiff-d.exr ] && [ ! -e halo-d.exr ] || [ ! -e idiff-d.exr ] && [ -e halo-d.exr ]; then
    echo "FAIL: compare $1 -o $2 $3: idiff wrote $( [ -e idiff-d.exr ] && echo one || echo none), halo $( [ -e halo-d.exr ] && echo one || echo none)"
    failures=$((failures + 1))
  elif [ -e idiff-d.exr ] && ! idiff -fail 0 -warn 0 idiff-d.exr halo-d.exr >/dev/null 2>&1; then
    echo "FAIL: compare $1 -o $2 $3: the difference images differ"
    failures=$((failures + 1))
  fi
}
for options in "" "-abs" "-scale 10" "-abs -scale 10" "-od" "-fail 0.2"; do
  diff_image "$options" d.exr a.exr
done
diff_image "-od" a.exr a.exr
diff_image "" a.exr a.exr
# idiff's perceptual test (-p): the same count of failing pixels on noise (and its verdict,
# which -p does not change).
for seed in 1 2 3; do
  oiiotool --pattern noise:type=uniform:min=0:max=1:seed=$seed 40x30 3 -o n$seed.exr
  oiiotool n$seed.exr --pattern noise:type=gaussian:mean=0:stddev=0.08:seed=$((seed + 10)) 40x30 3 \
    --add --mulc 2 -o m$seed.exr
  want=$(idiff -v -p n$seed.exr m$seed.exr 2>&1 | grep -oE '^ *[0-9]+ pixels .* failed the perceptual' | grep -oE '^ *[0-9]+')
  got=$("$halo" compare -p n$seed.exr m$seed.exr 2>&1 | grep -oE '^ *[0-9]+ pixels .* failed the perceptual' | grep -oE '^ *[0-9]+')
  if [ -z "$want" ] || [ "${got// /}" != "${want// /}" ]; then
    echo "FAIL: compare -p n$seed.exr m$seed.exr: halo counts '$got', idiff '$want'"
    failures=$((failures + 1))
  fi
done
for options in "-p" "-p -fail 1" "-p -fail 0.05 -failpercent 100"; do
  check "$options" a.exr d.exr
done
# A two-part EXR: its first part compared, as idiff does without -a, and said.
oiiotool a.exr d.exr --siappend -o parts.exr
oiiotool a.exr a.exr --siappend -o same.exr
check "" parts.exr a.exr
"$halo" compare parts.exr a.exr >parts.out 2>&1
if ! grep -q "only the first subimage compared (of 2 and 1)" parts.out; then
  echo "FAIL: compare parts.exr a.exr does not say that one part was compared"
  failures=$((failures + 1))
fi
# -a: every subimage and MIP level. Mipmapped TIFFs whose levels differ by 0.001 everywhere.
oiiotool --pattern checker 64x32 3 -d float -o flat.tif
oiiotool flat.tif -otex mip_a.tif
oiiotool flat.tif --addc 0.001 -otex mip_b.tif
check "-a" parts.exr parts.exr
check "-a" same.exr parts.exr     # the second part differs
check "-a -fail 0.2" same.exr parts.exr
check "-a" parts.exr a.exr        # 2 subimages against 1
check "-a" mip_a.tif mip_b.tif
check "-a -fail 0.01" mip_a.tif mip_b.tif
check "-a" mip_a.tif flat.tif     # 7 MIP levels against 1: idiff exits 3
levels=$("$halo" compare -a mip_a.tif mip_b.tif 2>&1 | grep -c "(MIP level [0-6]): FAILURE")
if [ "$levels" != 7 ]; then
  echo "FAIL: compare -a mip_a.tif mip_b.tif: $levels MIP levels failed, idiff fails all 7"
  failures=$((failures + 1))
fi
# Every part's figures as idiff reads them: each level's and subimage's largest error, where it
# is and in which channel (the pixels halo read from that part, not only the verdict).
for files in "mip_a.tif mip_b.tif" "same.exr parts.exr"; do
  want=$(idiff -v -a $files 2>&1 | sed -nE 's/^ *Max error *= *([0-9.e+-]+)( @ \(([0-9]+), ([0-9]+), ([A-Za-z]+)\))?.*/\1 \3 \4 \5/p')
  got=$("$halo" compare -a $files 2>&1 | sed -nE 's/^ *max error ([0-9.e+-]+) at \(([0-9]+), ([0-9]+)\) channel ([A-Za-z]+).*/\1 \2 \3 \4/p' | sed -E 's/^0 .*/0/')  # idiff: no place for 0
  if [ -z "$want" ] || [ "$(echo "$got" | sed 's/ *$//')" != "$(echo "$want" | sed 's/ *$//')" ]; then
    echo "FAIL: compare -a $files: largest errors by part differ from idiff's:"
    echo "halo: $got" | tr '\n' ';'; echo; echo "idiff: $want" | tr '\n' ';'; echo
    failures=$((failures + 1))
  fi
done
"$halo" compare -a same.exr parts.exr >parts.out 2>&1
if ! grep -q "(subimage 1): FAILURE" parts.out; then
  echo "FAIL: compare -a same.exr parts.exr does not fail the second part"
  failures=$((failures + 1))
fi
echo "idiff_agree: $failures of 56 cases differ from $(idiff --version 2>&1 | head -1)"
[ "$failures" = 0 ]
