#!/usr/bin/env python3
"""A Python package index (PEP 503 "simple" layout) for the python312 Function Pods of `npm run e2e:node`.

PyPI is unreachable here. The Pod's own command (upstream's controller, 1.13.0) runs
`PIP_CONFIG_FILE=package-registry-config/pip.conf pip install --target=/kubeless/.local -r requirements.txt`,
and pip.conf comes from the Secret serverless-package-registry-config, the same hook a cluster
without PyPI access uses. This writes the index that pip.conf names; main.ts serves it.

Usage: package-index.py OUT_DIR ITEM...
  ITEM is WHEEL_FILE (a wheel built from its source), or DEB_ROOT, a Debian package unpacked with
  `dpkg-deb -x`: its /usr/lib/python3/dist-packages holds one distribution, which becomes a wheel
  (its files, and the METADATA Debian ships for it).
"""
import base64
import hashlib
import html
import os
import re
import shutil
import sys
import zipfile

DIST_PACKAGES = 'usr/lib/python3/dist-packages'


def normalize(name: str) -> str:
    return re.sub(r'[-_.]+', '-', name).lower()


def digest(data: bytes) -> str:
    return 'sha256=' + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()


def wheel_from_deb(root: str, out: str) -> str:
    """Writes the distribution in ROOT's dist-packages as a wheel into OUT; returns its path."""
    dp = os.path.join(root, DIST_PACKAGES)
    entries = sorted(os.listdir(dp))
    metas = [e for e in entries if e.endswith('.dist-info') or e.endswith('.egg-info')]
    if len(metas) != 1:
        raise SystemExit(f'{root}: expected one .dist-info or .egg-info in {DIST_PACKAGES}, found {metas}')
    meta = metas[0]
    name, version = meta.rsplit('.', 1)[0].split('-', 1)
    meta_file = os.path.join(dp, meta, 'METADATA' if meta.endswith('.dist-info') else 'PKG-INFO')
    with open(meta_file, 'rb') as f:
        metadata = f.read()
    files = []
    for entry in entries:
        if entry == meta or entry == '__pycache__':
            continue
        path = os.path.join(dp, entry)
        if os.path.isdir(path):
            for base, dirs, names in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d != '__pycache__')
                files += [os.path.relpath(os.path.join(base, n), dp) for n in sorted(names) if not n.endswith('.pyc')]
        else:
            files.append(entry)
    # A compiled module beside its own Python source is a speedup (mypyc's, in charset_normalizer):
    # left out, so that the wheel installs on any Python 3 (the Pod's and `kyma-serverless run`'s).
    def speedup(f: str) -> bool:
        stem = re.sub(r'(__mypyc)?\.cpython-[^/]*\.so$', '', f)
        return f.endswith('.so') and (os.path.exists(os.path.join(dp, stem + '.py')) or '__mypyc' in f)
    files = [f for f in files if not speedup(f)]
    compiled = [f for f in files if f.endswith('.so')]
    tag = 'py3-none-any'
    if compiled:
        abi = re.search(r'\.cpython-(\d+)-', compiled[0])
        tag = f'cp{abi.group(1)}-cp{abi.group(1)}-linux_x86_64'
    dist = name.replace('-', '_')
    info = f'{dist}-{version}.dist-info'
    wheel_meta = f'Wheel-Version: 1.0\nGenerator: cdk8s-kyma-serverless e2e:node (from a Debian package)\nRoot-Is-Purelib: {"false" if compiled else "true"}\nTag: {tag}\n'.encode()
    target = os.path.join(out, f'{dist}-{version}-{tag}.whl')
    record = []
    with zipfile.ZipFile(target, 'w', zipfile.ZIP_DEFLATED) as whl:
        for rel in files:
            with open(os.path.join(dp, rel), 'rb') as f:
                data = f.read()
            whl.writestr(zipfile.ZipInfo(rel, (1980, 1, 1, 0, 0, 0)), data)
            record.append(f'{rel},{digest(data)},{len(data)}')
        for rel, data in ((f'{info}/METADATA', metadata), (f'{info}/WHEEL', wheel_meta)):
            whl.writestr(zipfile.ZipInfo(rel, (1980, 1, 1, 0, 0, 0)), data)
            record.append(f'{rel},{digest(data)},{len(data)}')
        record.append(f'{info}/RECORD,,')
        whl.writestr(zipfile.ZipInfo(f'{info}/RECORD', (1980, 1, 1, 0, 0, 0)), '\n'.join(record) + '\n')
    return target


def main() -> None:
    out, items = sys.argv[1], sys.argv[2:]
    simple = os.path.join(out, 'simple')
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(simple)
    staging = os.path.join(out, 'wheels')
    os.makedirs(staging)
    wheels = []
    for item in items:
        if item.endswith('.whl'):
            wheels.append(shutil.copy(item, staging))
        else:
            wheels.append(wheel_from_deb(item, staging))
    projects = {}
    for wheel in wheels:
        projects.setdefault(normalize(os.path.basename(wheel).split('-')[0]), []).append(wheel)
    for project, files in sorted(projects.items()):
        os.makedirs(os.path.join(simple, project))
        links = []
        for wheel in sorted(files):
            base = os.path.basename(wheel)
            shutil.move(wheel, os.path.join(simple, project, base))
            with open(os.path.join(simple, project, base), 'rb') as f:
                sha = hashlib.sha256(f.read()).hexdigest()
            links.append(f'<a href="{html.escape(base)}#sha256={sha}">{html.escape(base)}</a><br/>')
        with open(os.path.join(simple, project, 'index.html'), 'w') as f:
            f.write(f'<!DOCTYPE html>\n<html><body>\n{chr(10).join(links)}\n</body></html>\n')
        print(f'{project}: {", ".join(sorted(os.path.basename(w) for w in files))}')
    with open(os.path.join(simple, 'index.html'), 'w') as f:
        f.write('<!DOCTYPE html>\n<html><body>\n' + '\n'.join(f'<a href="{p}/">{p}</a><br/>' for p in sorted(projects)) + '\n</body></html>\n')
    os.rmdir(staging)


if __name__ == '__main__':
    main()
