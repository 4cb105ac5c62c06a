#!/usr/bin/env bash
# Builds a local runtime base image equivalent to gcr.io/distroless/cc-debian12:nonroot, from the
# Debian packages of this machine's own versions, for machines that cannot pull the public one.
# It holds what the scheduler binary needs and what distroless gives it: glibc and libgcc (libc6,
# libgcc-s1, without the iconv modules), the CA bundle of ca-certificates, /etc/passwd and
# /etc/group with root, nobody and nonroot (65532), /etc/nsswitch.conf, /tmp (1777) and
# /home/nonroot. No shell, no package manager. No zone data: the binary carries its own
# (chrono-tz). The image's user is 65532.
#
#   hack/image-base.sh IMAGE        e.g. localhost/gardener-scheduler-base:cc-debian12-nonroot
set -euo pipefail
if (($# != 1)); then
  echo "usage: hack/image-base.sh IMAGE" >&2
  exit 2
fi
image=$1
command -v buildah >/dev/null || { echo "image-base: buildah is missing (hack/ensure-package.sh buildah buildah)" >&2; exit 1; }
command -v dpkg-query >/dev/null && command -v apt-get >/dev/null ||
  { echo "image-base: needs a Debian machine (dpkg-query, apt-get) to take the packages from" >&2; exit 1; }
work=$(mktemp -d)
container=
cleanup() {
  [[ -n "$container" ]] && buildah rm "$container" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# The versions installed here: the binary was linked against this glibc.
packages=()
for package in libc6 libgcc-s1 ca-certificates; do
  version=$(dpkg-query -W -f='${Version}' "$package" 2>/dev/null) ||
    { echo "image-base: the Debian package $package is not installed here" >&2; exit 1; }
  packages+=("$package=$version")
done
(cd "$work" && { apt-get download "${packages[@]}" >/dev/null 2>&1 ||
  { apt-get update -qq >/dev/null 2>&1 && apt-get download "${packages[@]}" >/dev/null; }; }) ||
  { echo "image-base: apt-get download ${packages[*]} failed" >&2; exit 1; }

root=$work/root
mkdir -p "$root"
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$root"; done
rm -rf "$root"/usr/share/doc "$root"/usr/share/lintian "$root"/usr/share/man \
  "$root"/usr/lib/x86_64-linux-gnu/gconv "$root"/usr/sbin "$root"/usr/bin "$root"/etc/ca-certificates* \
  "$root"/usr/lib/*-linux-gnu/gconv "$root"/usr/share/ca-certificates-*
# The bundle update-ca-certificates would write from every certificate of the package.
mkdir -p "$root"/etc/ssl/certs
find "$root"/usr/share/ca-certificates -name '*.crt' -print0 | sort -z | xargs -0 cat >"$root"/etc/ssl/certs/ca-certificates.crt
rm -rf "$root"/usr/share/ca-certificates
cat >"$root"/etc/passwd <<'PASSWD'
root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
PASSWD
cat >"$root"/etc/group <<'GROUP'
root:x:0:
nobody:x:65534:
nonroot:x:65532:
GROUP
printf 'hosts: files dns\nnetworks: files\n' >"$root"/etc/nsswitch.conf
mkdir -p "$root"/tmp "$root"/home/nonroot "$root"/root
chmod 1777 "$root"/tmp
chmod 700 "$root"/root
chown 65532:65532 "$root"/home/nonroot
chmod 700 "$root"/home/nonroot

container=$(buildah from scratch)
buildah copy --quiet "$container" "$root" / >/dev/null
buildah config --user 65532:65532 --workingdir /home/nonroot \
  --env PATH=/usr/local/bin:/usr/bin:/bin --env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
  --label "org.opencontainers.image.description=local equivalent of gcr.io/distroless/cc-debian12:nonroot from ${packages[*]}" \
  "$container"
buildah commit --quiet --rm "$container" "$image" >/dev/null
container=
echo "image-base: built $image from the Debian packages ${packages[*]}" >&2
