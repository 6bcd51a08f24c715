# Decodes an H.264 clip with OpenCV and writes it `loops` times as one grey YUV4MPEG2 file
# (Cmono, full range, bare FRAME markers): the device machine has no ffmpeg program.
import sys, cv2
src, dst, loops = sys.argv[1], sys.argv[2], int(sys.argv[3])
cap = cv2.VideoCapture(src)
frames = []
while True:
    ok, f = cap.read()
    if not ok:
        break
    frames.append(cv2.cvtColor(f, cv2.COLOR_BGR2GRAY).tobytes())
with open(dst, "wb") as o:
    o.write(b"YUV4MPEG2 W1920 H1080 F24:1 Ip A1:1 Cmono XCOLORRANGE=FULL\n")
    for _ in range(loops):
        for fr in frames:
            o.write(b"FRAME\n")
            o.write(fr)
print(len(frames) * loops, "frames")
