#!/bin/sh
# Installs the Debian packages a step needs, saying which, and only the
# missing ones: `sh tools/deps.sh build|test|bench|fuzz` (root, or sudo).
# make never installs anything itself; this is the explicit step the
# README's two commands begin with.  Works on a bare Debian 12
# (debootstrap --variant=minbase): make, and libc6-dev beside gcc, are named
# because --no-install-recommends would leave them out.
set -eu

build="make gcc libc6-dev autoconf automake pkg-config libnl-3-dev libnl-route-3-dev
libnl-genl-3-dev libsystemd-dev libcap-dev"
# the test suite: cmocka, the man page lint, the daemon and live tests'
# tools (network namespaces, iperf3 floods, a booted container, a metrics
# scrape, a terminal for irqsteerctl top)
test="$build libcmocka-dev mandoc iproute2 iperf3 procps python3 ethtool util-linux tmux
debootstrap systemd-container xz-utils prometheus-node-exporter prometheus curl"
# the benchmarks against irqbalance and the torture/soak runs
bench="$test irqbalance valgrind gnuplot-nox nftables"
fuzz="$build clang libclang-rt-14-dev"

usage() {
        echo "usage: sh tools/deps.sh build|test|bench|fuzz" >&2
        echo "  build  compile irqsteerd and irqsteerctl (make, make run, make install)" >&2
        echo "  test   build + what make check and make check-live use" >&2
        echo "  bench  test + what make bench, make torture and make soak use" >&2
        echo "  fuzz   build + clang for make fuzz" >&2
        exit 2
}

[ $# -eq 1 ] || usage
case $1 in
build) pkgs=$build ;;
test) pkgs=$test ;;
bench) pkgs=$bench ;;
fuzz) pkgs=$fuzz ;;
*) usage ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
        echo "deps: not a Debian system; install the equivalents of:" $pkgs >&2
        exit 1
fi

missing=
for p in $pkgs; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -z "$missing" ]; then
        echo "deps: every package for '$1' is installed"
        exit 0
fi

echo "deps: installing Debian packages:$missing"
run=
if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
                run=sudo
        else
                echo "deps: root needed to install:$missing (run this as root)" >&2
                exit 1
        fi
fi
# shellcheck disable=SC2086 # the package list is split on purpose
$run apt-get update -q
# shellcheck disable=SC2086
$run env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
