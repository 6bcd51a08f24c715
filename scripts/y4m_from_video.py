#!/usr/bin/env python3
"""Decodes a video with OpenCV and writes it to standard output as a YUV4MPEG2 stream (the Y
plane only, 'Cmono'), for machines where geohash-match was built without FFmpeg:

    python3 scripts/y4m_from_video.py clip.mp4 | geohash-match --json ref.png -

Usage: y4m_from_video.py VIDEO [--frames N]
"""
import argparse
import sys

import cv2


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("video")
    ap.add_argument("--frames", type=int, default=0, help="stop after N frames (0: all)")
    args = ap.parse_args()
    cap = cv2.VideoCapture(args.video)
    if not cap.isOpened():
        sys.exit(f"y4m_from_video.py: {args.video}: cannot open the video")
    fps = cap.get(cv2.CAP_PROP_FPS) or 25.0
    out = sys.stdout.buffer
    count = 0
    while not args.frames or count < args.frames:
        ok, frame = cap.read()
        if not ok:
            break
        grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        if count == 0:
            h, w = grey.shape
            out.write(f"YUV4MPEG2 W{w} H{h} F{round(fps * 1000)}:1000 Ip A1:1 Cmono\n".encode())
        out.write(b"FRAME\n")
        out.write(grey.tobytes())
        count += 1
    out.flush()
    print(f"y4m_from_video.py: {count} frames", file=sys.stderr)


if __name__ == "__main__":
    main()
