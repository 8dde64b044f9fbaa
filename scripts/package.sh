#!/usr/bin/env bash
# Builds the Debian and RPM packages of wirespeed with nfpm
# (github.com/goreleaser/nfpm, installed at the pinned version below from
# the Go module proxy into $(go env GOPATH)/bin; not a module dependency):
#
#   scripts/package.sh            # dist/wirespeed_VERSION_ARCH.deb and .rpm
#   scripts/package.sh deb        # only the .deb (or rpm)
#
# The packages hold /usr/bin/wirespeed (its version stamped), the man
# pages, the bash, zsh and fish completions, the systemd units of
# deploy/systemd (run from /usr/bin), their settings under /etc as
# configuration files, and the README with the documentation its links
# reach (docs/, bench's README, deploy/prometheus). packaging/nfpm.yaml lists them;
# everything is staged under dist/root first. docs/packaging.md says more.
#
# The version is `git describe --tags --dirty` of the checkout (v1.2.3,
# or v1.2.3-4-gabcdef0 past a tag); with no tag, the pseudo-version Go
# gives a checkout (v0.0.0-20261207181500-abcdef012345, the commit's UTC
# time and hash). WIRESPEED_VERSION=v1.2.3 sets it outright (a source
# tree without git needs it). GOARCH picks the architecture (this
# machine's by default; another is built, not tried, here).
set -euo pipefail
cd "$(dirname "$0")/.."

nfpm_version=v2.48.0
formats=("$@")
[ ${#formats[@]} -gt 0 ] || formats=(deb rpm)
for f in "${formats[@]}"; do
  case $f in
  deb | rpm) ;;
  *)
    echo "package.sh: unknown format \"$f\": give deb, rpm or nothing (both)" >&2
    exit 2
    ;;
  esac
done

# The binary's version, and the package's: Debian's and RPM's versions
# start with a digit and have no "-" (a Debian version's "-" starts its
# revision), so v1.2.3-4-gabcdef0 is packaged as 1.2.3+4.gabcdef0 (after
# 1.2.3), a pre-release v1.2.3-rc1 as 1.2.3~rc1 (before 1.2.3) and a
# pseudo-version as 0.0.0~git20261207181500.abcdef012345 (before 0.0.0).
version=${WIRESPEED_VERSION:-}
if [ -z "$version" ]; then
  if ! git rev-parse --git-dir >/dev/null 2>&1; then
    echo "package.sh: not a git checkout, so no version to stamp: set one, like WIRESPEED_VERSION=v1.2.3 $0" >&2
    exit 2
  fi
  if version=$(git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null); then
    :
  else
    ts=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S)
    version=v0.0.0-$ts-$(git rev-parse --short=12 HEAD)
    git diff --quiet HEAD -- || version+=+dirty
  fi
fi
if [[ $version =~ ^v?([0-9]+(\.[0-9]+)*)-([0-9]+)-(g[0-9a-f]+)(-dirty)?$ ]]; then
  pkg_version=${BASH_REMATCH[1]}+${BASH_REMATCH[3]}.${BASH_REMATCH[4]}${BASH_REMATCH[5]:+.dirty}
elif [[ $version =~ ^v?0\.0\.0-([0-9]{14})-([0-9a-f]{12})(\+dirty)?$ ]]; then
  pkg_version=0.0.0~git${BASH_REMATCH[1]}.${BASH_REMATCH[2]}${BASH_REMATCH[3]:+.dirty}
elif [[ $version =~ ^v?([0-9]+(\.[0-9]+)*)-([0-9A-Za-z.]*[A-Za-z][0-9A-Za-z.]*)$ && ${BASH_REMATCH[3]} != dirty ]]; then
  pkg_version=${BASH_REMATCH[1]}~${BASH_REMATCH[3]} # a pre-release, v1.2.3-rc1: before 1.2.3
elif [[ $version =~ ^v?([0-9][0-9A-Za-z.+~]*)(-dirty)?$ ]]; then
  pkg_version=${BASH_REMATCH[1]}${BASH_REMATCH[2]:+.dirty}
else
  echo "package.sh: version \"$version\" cannot be a package's: give one like v1.2.3 (WIRESPEED_VERSION=v1.2.3)" >&2
  exit 2
fi

arch=${GOARCH:-$(go env GOARCH)}
root=dist/root
rm -rf "$root"
mkdir -p "$root"

# The binary: static, as the Dockerfile builds it.
CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath \
  -ldflags "-s -w -X wirespeed/internal/cli.Version=$version" \
  -o "$root/usr/bin/wirespeed" ./cmd/wirespeed
# The man pages and completions are written by the binary itself; for
# another architecture, by one built for this machine, same version.
gen=$root/usr/bin/wirespeed
if [ "$arch" != "$(go env GOHOSTARCH)" ]; then
  gen=dist/wirespeed-host
  go build -trimpath -ldflags "-X wirespeed/internal/cli.Version=$version" -o "$gen" ./cmd/wirespeed
fi

man=$root/usr/share/man/man1
"$gen" man "$man" 2>/dev/null
gzip -9n "$man"/*.1

mkdir -p "$root/completions"
"$gen" completion bash >"$root/completions/wirespeed.bash"
"$gen" completion zsh >"$root/completions/_wirespeed"
"$gen" completion fish >"$root/completions/wirespeed.fish"

# The units run the packaged binary; deploy/systemd's run /usr/local/bin's.
mkdir -p "$root/units"
for u in wirespeed.service wirespeed-exporter.service wirespeed-mesh.service wirespeed-mesh.timer; do
  sed 's|/usr/local/bin/wirespeed|/usr/bin/wirespeed|g' "deploy/systemd/$u" >"$root/units/$u"
done
if grep -l /usr/local/bin "$root"/units/*; then
  echo "package.sh: the units above still name /usr/local/bin" >&2
  exit 1
fi

mkdir -p dist
nfpm=$(go env GOPATH)/bin/nfpm
# (its --version says "dev" when built by go install: the module's
# version is in the binary's build information.)
if ! go version -m "$nfpm" 2>/dev/null | grep -q "nfpm/v2[[:space:]]*$nfpm_version[[:space:]]"; then
  echo "package.sh: installing nfpm $nfpm_version into $(dirname "$nfpm")" >&2
  go install "github.com/goreleaser/nfpm/v2/cmd/nfpm@$nfpm_version"
fi
# One line on stdout per package made: its path.
for f in "${formats[@]}"; do
  out=dist/wirespeed_${pkg_version}_$arch.$f
  rm -f "$out"
  WIRESPEED_PKG_VERSION=$pkg_version WIRESPEED_PKG_ARCH=$arch \
    "$nfpm" package --config packaging/nfpm.yaml --packager "$f" --target "$out" >&2
  echo "$out"
done
echo "wirespeed $version, packaged as $pkg_version" >&2
