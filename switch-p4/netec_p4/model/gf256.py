"""GF(2^8) with polynomial 0x11d and Hadoop's RS (Cauchy) matrices, in plain Python.

Written independently of the Java codec so that shared test vectors cross-check two
implementations. The P4 table generator uses the same log/exp tables.
"""

POLY = 0x11D

EXP = [0] * 512
LOG = [0] * 256
_x = 1
for _i in range(255):
    EXP[_i] = _x
    LOG[_x] = _i
    _x <<= 1
    if _x & 0x100:
        _x ^= POLY
for _i in range(255, 512):
    EXP[_i] = EXP[_i - 255]


def mul(a: int, b: int) -> int:
    if a == 0 or b == 0:
        return 0
    return EXP[LOG[a] + LOG[b]]


def inv(a: int) -> int:
    if a == 0:
        raise ZeroDivisionError("0 has no inverse in GF(2^8)")
    return EXP[255 - LOG[a]]


def encode_matrix(k: int, m: int) -> list:
    """(k+m) x k: identity on top, a[i][j] = 1/(i ^ j) below (ISA-L gf_gen_cauchy1_matrix)."""
    a = [[1 if i == j else 0 for j in range(k)] for i in range(k)]
    a += [[inv(i ^ j) for j in range(k)] for i in range(k, k + m)]
    return a


def invert(mat: list) -> list:
    n = len(mat)
    a = [row[:] for row in mat]
    out = [[1 if i == j else 0 for j in range(n)] for i in range(n)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if a[r][col]), None)
        if pivot is None:
            raise ValueError("singular matrix")
        a[col], a[pivot] = a[pivot], a[col]
        out[col], out[pivot] = out[pivot], out[col]
        scale = inv(a[col][col])
        a[col] = [mul(v, scale) for v in a[col]]
        out[col] = [mul(v, scale) for v in out[col]]
        for r in range(n):
            f = a[r][col]
            if r != col and f:
                a[r] = [v ^ mul(f, p) for v, p in zip(a[r], a[col])]
                out[r] = [v ^ mul(f, p) for v, p in zip(out[r], out[col])]
    return out


def decode_rows(k: int, m: int, survivors: list, erased: list) -> list:
    """Row r rebuilds unit erased[r] from the units survivors (k of them, in that order)."""
    enc = encode_matrix(k, m)
    inverse = invert([enc[s] for s in survivors])
    rows = []
    for e in erased:
        rows.append([_dot(enc[e], [inverse[t][j] for t in range(k)]) for j in range(k)])
    return rows


def _dot(a: list, b: list) -> int:
    acc = 0
    for x, y in zip(a, b):
        acc ^= mul(x, y)
    return acc


def encode(data_units: list, m: int) -> list:
    """Parity units of equal-length data units."""
    k = len(data_units)
    enc = encode_matrix(k, m)
    length = len(data_units[0])
    return [bytes(_dot([enc[k + p][j] for j in range(k)], [d[x] for d in data_units])
                  for x in range(length)) for p in range(m)]


def random_units(k: int, m: int, length: int, seed: int) -> list:
    """k seeded random data units of LENGTH bytes, then their m parity units, by unit index."""
    import random
    rnd = random.Random(seed)
    data = [bytes(rnd.randrange(256) for _ in range(length)) for _ in range(k)]
    return data + encode(data, m)
