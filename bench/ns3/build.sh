#!/usr/bin/env bash
# Builds the ns-3 validation programs (bulk, incast, dctcp, scenario) into bench/ns3/build/.
#
# Needs Debian's ns-3 3.37 development package:
#   apt-get install -y --no-install-recommends libns3-dev libgsl-dev pkg-config
# Headers live in /usr/include/ns3/ and libraries are /usr/lib/<triplet>/libns3-<module>.so
# (no version suffix in the -l names). Debian's ns3-*.pc pkg-config files carry a broken
# Cflags entry ("-I/usr\;"), so we do not use pkg-config and pass the flags ourselves.
#
# Environment: CXX (default g++), CXXFLAGS (default -O2), NS3_PREFIX (default /usr: headers in
# $NS3_PREFIX/include/ns3, libraries in the default linker path or $NS3_PREFIX/lib).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$here/build"
CXX="${CXX:-g++}"
CXXFLAGS="${CXXFLAGS:--O2}"
NS3_PREFIX="${NS3_PREFIX:-/usr}"
LIBS=(-lns3-core -lns3-network -lns3-internet -lns3-point-to-point -lns3-applications
      -lns3-traffic-control)
EXTRA=()
if [ "$NS3_PREFIX" != "/usr" ]; then
    EXTRA=(-I"$NS3_PREFIX/include" -L"$NS3_PREFIX/lib" -Wl,-rpath,"$NS3_PREFIX/lib")
fi

if [ ! -f "$NS3_PREFIX/include/ns3/core-module.h" ]; then
    echo "build.sh: ns-3 headers not found ($NS3_PREFIX/include/ns3/core-module.h)." >&2
    echo "build.sh: install Debian's ns-3 3.37 dev package first:" >&2
    echo "    sudo apt-get install -y --no-install-recommends libns3-dev libgsl-dev pkg-config" >&2
    exit 2
fi
if ! command -v "$CXX" >/dev/null 2>&1; then
    echo "build.sh: C++ compiler '$CXX' not found (apt-get install g++)." >&2
    exit 2
fi

mkdir -p "$build"
pids=()
for prog in bulk incast dctcp scenario; do
    echo "build.sh: compiling $prog" >&2
    # One compiler per program, in parallel; each takes ~10 s.
    "$CXX" $CXXFLAGS -std=c++17 -Wall -Wextra -Wno-unused-parameter \
        "${EXTRA[@]}" -o "$build/$prog" "$here/$prog.cc" "${LIBS[@]}" &
    pids+=($!)
done
rc=0
for p in "${pids[@]}"; do
    wait "$p" || rc=1
done
if [ "$rc" -ne 0 ]; then
    echo "build.sh: compilation failed" >&2
    exit 1
fi
echo "build.sh: built $build/{bulk,incast,dctcp,scenario}" >&2
