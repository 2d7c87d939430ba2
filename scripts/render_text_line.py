#!/usr/bin/python3
"""Renders one line of text as the OCR recognizer expects it, as a binary PPM (P6).

Usage: render_text_line.py TEXT OUT.ppm [--width W] [--font FILE] [--size PX]
       render_text_line.py --page X,Y,SIZE,TEXT [--page ...] OUT.ppm [--page-size W,H]
                           [--turn N ...]

Page mode (--page, repeated: one text line each, its left edge at X, its top at Y, SIZE
pixels high) draws every line on one white page (800 x 600 by default), as the text
detector of a whole OCR page expects one; the TEXT positional is then left out. --turn N
draws line N (from 0) upside down, for the page's angle classifier.

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


def render_page(lines, font_path, width, height, turned=()):
    """The page as a PIL RGB image: each (x, y, size, text) drawn black, its ink's top-left
    at (x, y); the lines whose indices are in `turned` upside down in the same place."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (width, height), "white")
    for i, (x, y, size, text) in enumerate(lines):
        font = ImageFont.truetype(font_path, size)
        left, top, right, bottom = font.getbbox(text)
        if x + right - left > width or y + bottom - top > height:
            raise ValueError(f"--page {x},{y},{size},{text}: the line does not fit the page")
        line = Image.new("RGB", (right - left, bottom - top), "white")
        ImageDraw.Draw(line).text((-left, -top), text, font=font, fill="black")
        image.paste(line.rotate(180) if i in turned else line, (x, y))
    return image


def parse_page_line(spec):
    """X,Y,SIZE,TEXT as (x, y, size, text); the text may hold commas."""
    parts = spec.split(",", 3)
    if len(parts) != 4 or not all(p.isdigit() for p in parts[:3]) or not parts[3]:
        raise argparse.ArgumentTypeError(f"expected X,Y,SIZE,TEXT, got '{spec}'")
    return int(parts[0]), int(parts[1]), int(parts[2]), parts[3]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("args", nargs="+", help="TEXT OUT.ppm, or OUT.ppm with --page")
    parser.add_argument("--page", action="append", type=parse_page_line, default=[],
                        help="X,Y,SIZE,TEXT: a line of a page (repeat the flag)")
    parser.add_argument("--page-size", default="800,600", help="W,H of a page")
    parser.add_argument("--turn", action="append", type=int, default=[],
                        help="draw the page's line N (from 0) upside down (repeat the flag)")
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
    if len(args.args) != (1 if args.page else 2):
        parser.error("give TEXT OUT.ppm, or OUT.ppm with --page")
    out = args.args[-1]
    try:
        if args.page:
            w, h = (int(v) for v in args.page_size.split(","))
            image = render_page(args.page, args.font, w, h, set(args.turn))
        else:
            image = render(args.args[0], args.font, args.size, args.width)
    except (OSError, ValueError) as e:
        print(f"render_text_line: {e}", file=sys.stderr)
        return 1
    with open(out, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % image.size)
        f.write(image.tobytes())
    return 0


if __name__ == "__main__":
    sys.exit(main())
