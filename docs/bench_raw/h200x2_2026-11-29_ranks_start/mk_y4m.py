# Decodes data/video/Megamind.avi with OpenCV, scales it to 1920x1080 grey, and writes it as one
# YUV4MPEG2 file of at least `frames` frames (looped; Cmono, full range, bare FRAME markers) and
# its frame 50 as the reference PNG: the device machine has no ffmpeg program.
import sys, cv2
src, dst, ref, want = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
cap = cv2.VideoCapture(src)
frames = []
while True:
    ok, f = cap.read()
    if not ok:
        break
    g = cv2.resize(cv2.cvtColor(f, cv2.COLOR_BGR2GRAY), (1920, 1080), interpolation=cv2.INTER_CUBIC)
    frames.append(g)
cv2.imwrite(ref, frames[50])
n = 0
with open(dst, "wb") as o:
    o.write(b"YUV4MPEG2 W1920 H1080 F24:1 Ip A1:1 Cmono XCOLORRANGE=FULL\n")
    while n < want:
        for g in frames:
            o.write(b"FRAME\n")
            o.write(g.tobytes())
            n += 1
print(n, "frames of", len(frames))
