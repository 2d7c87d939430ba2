#!/usr/bin/env python3
"""Reads a line of text from an image with PaddleOCR's PP-OCRv4 recognizer, compiled by
graphjit from Python: graphjit.onnx.load imports the ONNX model, the first call of each
line width compiles it (the automatic policy makes the width symbolic once it changes),
and the per-step class scores are CTC-decoded here.

    PYTHONPATH=build/python python3 examples/python/ocr.py LINE.ppm [--fetch-dir DIR]

LINE is any image PIL reads (scripts/render_text_line.py draws a PPM line); it is
resized to height 48 (bilinear) unless it has it. The model and its keys come from
scripts/fetch_models.sh (DIR: $GRAPHJIT_FETCH_DIR, else third_party/fetched). Prints the
text; exit 1 with a message on error.
"""

import argparse
import math
import os
import sys

import numpy as np

import graphjit

HEIGHT = 48  # the recognizer's input height
HERE = os.path.dirname(os.path.abspath(__file__))


def fetch_dir():
    return os.environ.get("GRAPHJIT_FETCH_DIR") or os.path.join(HERE, "..", "..", "third_party",
                                                                "fetched")


def read_keys(path):
    """The classes: the CTC blank, one character per line of the key file, a space."""
    with open(path, encoding="utf-8") as f:
        keys = [line.rstrip("\r\n") for line in f]
    if keys and keys[-1] == "":
        keys.pop()
    if not keys or any(k == "" for k in keys):
        raise ValueError(f"{path}: expected one character per line")
    return [""] + keys + [" "]


def preprocess(image):
    """An RGB PIL image as the model's input f32[1, 3, 48, W], as PaddleOCR prepares it:
    x / 255, then (x - 0.5) / 0.5, each step rounded to f32."""
    from PIL import Image

    if image.height != HEIGHT:
        width = math.ceil(HEIGHT * image.width / image.height)
        image = image.resize((width, HEIGHT), Image.BILINEAR)
    rgb = np.asarray(image.convert("RGB"), dtype=np.float32)  # [48, W, 3]
    unit = rgb / np.float32(255)
    return np.ascontiguousarray(((unit - np.float32(0.5)) / np.float32(0.5)).transpose(2, 0, 1)[None])


def ctc_greedy(scores, classes):
    """Per row: the best class of each step; repeats merged, blanks dropped."""
    texts = []
    for row in scores:
        best = row.argmax(axis=-1)
        previous, text = 0, []
        for c in best:
            if c != 0 and c != previous:
                text.append(classes[c])
            previous = c
        texts.append("".join(text))
    return texts


class Recognizer:
    def __init__(self, directory):
        models = os.path.join(directory, "ocr-models")
        model_path = os.path.join(models, "ch_PP-OCRv4_rec_infer.onnx")
        keys_path = os.path.join(models, "ppocr_keys_v1.txt")
        for path in (model_path, keys_path):
            if not os.path.exists(path):
                raise FileNotFoundError(f"{path} is missing: run scripts/fetch_models.sh")
        self.classes = read_keys(keys_path)
        self.model = graphjit.onnx.load(model_path)

    def read(self, image):
        (scores,) = self.model(preprocess(image))
        if scores.shape[-1] != len(self.classes):
            raise ValueError(f"the model has {scores.shape[-1]} classes, the keys "
                             f"{len(self.classes)}")
        return ctc_greedy(scores, self.classes)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("image")
    parser.add_argument("--fetch-dir", default=None, help="where scripts/fetch_models.sh put "
                        "the model (default $GRAPHJIT_FETCH_DIR or third_party/fetched)")
    args = parser.parse_args()
    try:
        from PIL import Image

        recognizer = Recognizer(args.fetch_dir or fetch_dir())
        with Image.open(args.image) as image:
            print(recognizer.read(image))
    except (OSError, ValueError, RuntimeError, ImportError) as e:
        print(f"ocr: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
