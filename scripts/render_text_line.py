#!/usr/bin/python3
"""Renders one line of text as the OCR recognizer expects it, as a binary PPM (P6).

Usage: render_text_line.py TEXT OUT.ppm [--width W] [--font FILE] [--size PX]

Black DejaVu Sans (32 px by default) on a white line 48 px high, the width fitted to the
text plus a small margin; --width pads the line on the right with white to W pixels (an
error if the text does not fit). PPM because the C++ side (models/ocr.h) reads it without
an image library. Needs Debian's python3-pil and fonts-dejavu-core, which only
/usr/bin/python3 sees (hence the shebang); exits 2 with a message if PIL is missing.
"""

import argparse
import sys

HEIGHT = 48  # the recognizer's input height
# White pixels left and right of the text. Small on purpose: with 12 or more the model
# reads the margin as a leading space (and at 8 already before some capitals).
MARGIN = 4
DEFAULT_FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def render(text, font_path, size, width):
    """The line as a PIL RGB image."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(font_path, size)
    left, top, right, bottom = font.getbbox(text)
    fitted = (right - left) + 2 * MARGIN
    if width is None:
        width = fitted
    elif width < fitted:
        raise ValueError(f"--width {width}: the text needs at least {fitted} px")
    image = Image.new("RGB", (width, HEIGHT), "white")
    # Centred vertically on the ink, so every line sits the same way in the 48 rows.
    y = (HEIGHT - (bottom - top)) // 2 - top
    ImageDraw.Draw(image).text((MARGIN - left, y), text, font=font, fill="black")
    return image


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("text")
    parser.add_argument("out", help="the .ppm file to write")
    parser.add_argument("--width", type=int, help="pad the line to this many pixels")
    parser.add_argument("--font", default=DEFAULT_FONT)
    parser.add_argument("--size", type=int, default=32, help="font size in pixels")
    args = parser.parse_args()
    try:
        import PIL  # noqa: F401
    except ImportError:
        print("render_text_line: PIL is missing: apt-get install python3-pil "
              "(and run this with /usr/bin/python3)", file=sys.stderr)
        return 2
    try:
        image = render(args.text, args.font, args.size, args.width)
    except (OSError, ValueError) as e:
        print(f"render_text_line: {e}", file=sys.stderr)
        return 1
    with open(args.out, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % image.size)
        f.write(image.tobytes())
    return 0


if __name__ == "__main__":
    sys.exit(main())
