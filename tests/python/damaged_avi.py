"""damaged_avi.py - a copy of an AVI with one video chunk (the 100th or later of a usual size)
overwritten with noise, for the damaged-frame cases of tests/cli/video.sh (which runs this file:
python3 damaged_avi.py SRC DST) and tests/python/test_match.py (which imports damage_one_chunk()), so
that both damage the same bytes."""

import sys


def damage_one_chunk(data):
    """data (the AVI's bytes) with one video chunk's payload replaced by noise."""
    d = bytearray(data)
    i = n = 0
    while True:
        i = d.find(b"00dc", i + 1)
        size = int.from_bytes(d[i + 4:i + 8], "little")
        n += 1
        if n >= 100 and 2000 < size < 200000:
            break
    for k in range(i + 48, i + 408):
        d[k] = (k * 2654435761 >> 13) & 0xFF
    return bytes(d)


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as f:
        out = damage_one_chunk(f.read())
    with open(sys.argv[2], "wb") as f:
        f.write(out)
