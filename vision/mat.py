"""The printable table mat: corner ArUco markers, a scale bar and the zones of the observation.

The zones are filled with a deep violet "felt" (a hue no UNO or standard card prints) because
cards must stand out from what they lie on; the markers sit on white squares (their quiet zone).
Output is PNG, or a one-page PDF that embeds the image as JPEG, written by hand so no PDF library
is needed.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.geometry import ARUCO_DICT, DEFAULT_MAT, MatSpec

FELT_BGR = (120, 48, 96)
PAPER_BGR = (235, 235, 235)
LINE_BGR = (80, 30, 64)


def render_mat(mat: MatSpec = DEFAULT_MAT, px_per_mm: float = 4.0) -> np.ndarray:
    """The mat as a BGR image at ``px_per_mm`` (4 ≈ 100 dpi; use 6 for 150 dpi printing)."""
    if px_per_mm <= 0:
        raise ValueError("px_per_mm must be positive")
    s = px_per_mm
    w, h = round(mat.width * s), round(mat.height * s)
    img = np.full((h, w, 3), PAPER_BGR, np.uint8)
    font, thick = cv2.FONT_HERSHEY_SIMPLEX, max(1, round(s * 0.6))
    for z in mat.zones:
        p0 = (round(z.x * s), round(z.y * s))
        p1 = (round((z.x + z.w) * s), round((z.y + z.h) * s))
        cv2.rectangle(img, p0, p1, FELT_BGR, -1)
        cv2.rectangle(img, p0, p1, LINE_BGR, max(1, round(s)))
        cv2.putText(img, z.name.upper(), (p0[0] + round(3 * s), p1[1] - round(3 * s)), font,
                    s * 0.3, LINE_BGR, thick, cv2.LINE_AA)
    dictionary = cv2.aruco.getPredefinedDictionary(ARUCO_DICT)
    for marker_id in range(4):
        c = mat.marker_corners(marker_id) * s
        x0, y0 = round(c[0, 0]), round(c[0, 1])
        side = round(mat.marker * s)
        quiet = round(2 * s)
        cv2.rectangle(img, (x0 - quiet, y0 - quiet), (x0 + side + quiet, y0 + side + quiet),
                      (255, 255, 255), -1)
        marker = cv2.aruco.generateImageMarker(dictionary, marker_id, side)
        img[y0:y0 + side, x0:x0 + side] = cv2.cvtColor(marker, cv2.COLOR_GRAY2BGR)
    _scale_bar(img, mat, s)
    cv2.putText(img, f"cardtable mat {mat.width:.0f}x{mat.height:.0f} mm - print at 100% scale",
                (round(mat.margin * s), round((mat.height - 1.5) * s)), font, s * 0.15,
                (60, 60, 60), max(1, thick // 2), cv2.LINE_AA)
    return img


def _scale_bar(img: np.ndarray, mat: MatSpec, s: float) -> None:
    """A 100 mm bar with 10 mm ticks in the left strip, to check the print scale with a ruler."""
    x = round((mat.margin + mat.marker / 2) * s)
    y0, y1 = round((mat.margin + mat.marker + 20) * s), round((mat.margin + mat.marker + 120) * s)
    cv2.line(img, (x, y0), (x, y1), (0, 0, 0), max(1, round(s * 0.8)))
    for k in range(11):
        y = round(y0 + k * 10 * s)
        half = round((6 if k % 5 == 0 else 3) * s)
        cv2.line(img, (x - half, y), (x + half, y), (0, 0, 0), max(1, round(s * 0.5)))
    cv2.putText(img, "100 mm", (x - round(12 * s), y1 + round(8 * s)), cv2.FONT_HERSHEY_SIMPLEX,
                s * 0.15, (0, 0, 0), max(1, round(s * 0.4)), cv2.LINE_AA)


def encode_png(image: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".png", image)
    if not ok:
        raise OSError("could not encode the mat as PNG")
    return buf.tobytes()


def encode_pdf(image: np.ndarray, width_mm: float, height_mm: float) -> bytes:
    """A one-page PDF of exactly ``width_mm`` × ``height_mm`` showing ``image`` (JPEG inside)."""
    ok, jpg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    if not ok:
        raise OSError("could not encode the mat as JPEG for the PDF")
    data = jpg.tobytes()
    pw, ph = width_mm * 72 / 25.4, height_mm * 72 / 25.4
    content = f"q {pw:.2f} 0 0 {ph:.2f} 0 0 cm /Im0 Do Q".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {pw:.2f} {ph:.2f}] "
        "/Resources << /XObject << /Im0 4 0 R >> >> /Contents 5 0 R >>".encode(),
        f"<< /Type /XObject /Subtype /Image /Width {image.shape[1]} /Height {image.shape[0]} "
        f"/ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode /Length {len(data)} >>\n"
        "stream\n".encode() + data + b"\nendstream",
        f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\n"
            f"startxref\n{xref}\n%%EOF\n").encode()
    return bytes(out)
