#!/usr/bin/env python3
"""Decodes a video with OpenCV and writes it to standard output as a YUV4MPEG2 stream (the Y
plane only, 'Cmono'), for machines where geohash-match was built without FFmpeg:

    python3 scripts/y4m_from_video.py clip.mp4 | geohash-match --json ref.png -

OpenCV is asked for the decoder's own pixels (CAP_PROP_CONVERT_RGB off): where its FFmpeg
backend hands over planar YUV 4:2:0, the Y plane is written as it is, without the conversion to
BGR and back to grey (twice the frame rate at 640x480); any other layout is converted.

Usage: y4m_from_video.py VIDEO [--frames N] [--convert]
"""
import argparse
import os
import sys

# OpenCV warns once per frame about a pixel format it passes on untouched: errors only.
os.environ.setdefault("OPENCV_LOG_LEVEL", "ERROR")
import cv2  # noqa: E402 (after the environment it reads)


def grey_of(frame, w, h):
    """The grey picture of a decoded frame: the Y plane of planar YUV 4:2:0, else converted."""
    if frame.ndim == 2 and frame.shape == (h * 3 // 2, w):
        return frame[:h]
    if frame.ndim == 2 and frame.shape == (h, w):
        return frame
    return cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("video")
    ap.add_argument("--frames", type=int, default=0, help="stop after N frames (0: all)")
    ap.add_argument("--convert", action="store_true",
                    help="always let OpenCV convert to BGR, then to grey (the slower path)")
    args = ap.parse_args()
    cap = cv2.VideoCapture(args.video)
    if not cap.isOpened():
        sys.exit(f"y4m_from_video.py: {args.video}: cannot open the video")
    if not args.convert:
        cap.set(cv2.CAP_PROP_CONVERT_RGB, 0)
    w = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH))
    h = int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
    fps = cap.get(cv2.CAP_PROP_FPS) or 25.0
    out = sys.stdout.buffer
    count = 0
    while not args.frames or count < args.frames:
        ok, frame = cap.read()
        if not ok:
            break
        grey = grey_of(frame, w, h)
        if count == 0:
            h, w = grey.shape
            out.write(f"YUV4MPEG2 W{w} H{h} F{round(fps * 1000)}:1000 Ip A1:1 Cmono\n".encode())
        elif grey.shape != (h, w):
            sys.exit(f"y4m_from_video.py: {args.video}: frame {count} is {grey.shape[1]}x"
                     f"{grey.shape[0]}, the first was {w}x{h}")
        out.write(b"FRAME\n")
        out.write(grey.tobytes())
        count += 1
    out.flush()
    print(f"y4m_from_video.py: {count} frames", file=sys.stderr)


if __name__ == "__main__":
    main()
