"""The container of a model file, read defensively: a zip archive whose members are
size-capped and CRC-checked, and inside it a numpy ``.npz`` whose ``.npy`` headers are
checked (dtype kind, no object dtype, declared bytes = bytes present) before any array is
allocated, then each array against its shape, dtype and sha256 in ``meta.json``.
"""

from __future__ import annotations

import hashlib
import io
import math
import zipfile
import zlib

import numpy as np

from bisvm.persistence._registry import ModelFileError

__all__ = ["ARRAY_KINDS", "array_sha256", "read_arrays", "read_member", "sniff_foreign",
           "zip_members"]

#: dtype kinds an array of a model file may have: numbers, booleans and strings
ARRAY_KINDS = "biufcUS"


def array_sha256(a):
    """Hex sha256 of an array's C-order bytes (what ``meta.json`` records per array)."""
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def sniff_foreign(head):
    """What a file that is not a zip archive looks like, from its first bytes."""
    if head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return "a Python pickle (bisvm never loads pickles)"
    if head.startswith(b"\x93NUMPY"):
        return "a bare .npy array"
    if head.lstrip()[:1] in (b"{", b"["):
        return "a JSON/text file"
    return "not a zip container"


def read_member(zf, info, cap, what):
    """Bytes of one zip member, refusing encryption, unknown compression, more than
    ``cap`` bytes, or a size other than declared."""
    if info.flag_bits & 0x1:
        raise ModelFileError(f"{what} is encrypted")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise ModelFileError(f"{what} uses an unsupported compression method")
    if info.file_size > cap:
        raise ModelFileError(
            f"{what} declares {info.file_size} bytes uncompressed, more than the limit of "
            f"{cap} bytes"
        )
    try:
        with zf.open(info) as fh:
            data = fh.read(cap + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, OSError) as exc:
        raise ModelFileError(f"{what} is corrupt or truncated ({exc})") from None
    if len(data) != info.file_size:
        raise ModelFileError(f"{what}: {len(data)} bytes, its header says {info.file_size}")
    return data


def zip_members(zf, what):
    """``{name: ZipInfo}`` of an archive without duplicate names."""
    infos = zf.infolist()
    names = [i.filename for i in infos]
    if len(set(names)) != len(names):
        raise ModelFileError(f"{what} has duplicate member names")
    return {i.filename: i for i in infos}


def read_arrays(npz_bytes, entries, cap):
    """``{key: array}`` of ``arrays.npz``, each checked against its ``meta.json`` entry;
    exactly the described arrays, at most ``cap`` bytes in all."""
    try:
        inner = zipfile.ZipFile(io.BytesIO(npz_bytes))
    except (zipfile.BadZipFile, EOFError, ValueError, OSError):
        raise ModelFileError(
            "arrays.npz is not a valid npz archive (truncated or tampered)"
        ) from None
    members = zip_members(inner, "arrays.npz")
    total = sum(i.file_size for i in members.values())
    if total > cap:
        raise ModelFileError(
            f"arrays.npz declares {total} bytes uncompressed, more than the limit of {cap} bytes"
        )
    arrays = {}
    for name, info in members.items():
        if not name.endswith(".npy"):
            raise ModelFileError(f"arrays.npz: unexpected member {name[:80]!r}")
        key = name[:-4]
        if key not in entries:
            raise ModelFileError(f"arrays.npz: array {key[:80]!r} is not described in meta.json")
        data = read_member(inner, info, cap, f"array {key!r}")
        arrays[key] = _load_npy(data, key, entries[key])
    missing = sorted(set(entries) - set(arrays))
    if missing:
        raise ModelFileError(f"array {missing[0][:80]!r} described in meta.json is missing")
    return arrays


def _load_npy(data, key, entry):
    """Check an .npy member's header against its size and meta.json, then load it."""
    fp = io.BytesIO(data)
    version = np.lib.format.read_magic(fp)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(fp)
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(fp)
    else:
        raise ModelFileError(f"array {key!r}: unsupported .npy version {version}")
    if dtype.hasobject:
        raise ModelFileError(f"array {key!r} is an object array (pickle): refused")
    if dtype.kind not in ARRAY_KINDS or dtype.names is not None:
        raise ModelFileError(f"array {key!r}: dtype {dtype} is not allowed")
    if not isinstance(entry, dict):
        raise ModelFileError(f"meta.json: malformed entry for array {key!r}")
    if list(shape) != entry.get("shape") or dtype.str != entry.get("dtype"):
        raise ModelFileError(
            f"array {key!r}: shape {tuple(shape)} dtype {dtype.str} in arrays.npz, meta.json "
            f"says shape {tuple(entry.get('shape') or ())} dtype {entry.get('dtype')}"
        )
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes != len(data) - fp.tell():
        raise ModelFileError(
            f"array {key!r}: header declares {nbytes} bytes of data, {len(data) - fp.tell()} "
            "are present (truncated or tampered)"
        )
    fp.seek(0)
    a = np.load(fp, allow_pickle=False)
    a = np.array(a, copy=True, order="K")  # writeable, freshly aligned like a fitted array
    if array_sha256(a) != entry.get("sha256"):
        raise ModelFileError(f"array {key!r}: sha256 does not match meta.json (tampered)")
    return a
