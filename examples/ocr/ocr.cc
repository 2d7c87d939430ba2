// Reads a line of text from an image with PaddleOCR's PP-OCRv4 recognizer compiled by
// graphjit: the ONNX model imported, run under compiler::Jit, its output CTC-decoded.
//
//   ocr LINE.ppm [FETCH_DIR]     (FETCH_DIR: where scripts/fetch_models.sh put the model,
//                                 default $GRAPHJIT_FETCH_DIR or third_party/fetched)
//
// LINE.ppm is a binary PPM of one text line (scripts/render_text_line.py draws one); it
// is resized to height 48 if it is not. Prints the text; exit 1 with a message on error.
#include "models/ocr.h"

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  namespace gj = graphjit;
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s LINE.ppm [FETCH_DIR]\n", argv[0]);
    return 1;
  }
  const std::string fetch_dir = argc == 3 ? argv[2] : gj::models::OcrFetchDir(".");
  auto image = gj::models::ReadPpm(argv[1]);
  if (!image.ok()) {
    std::fprintf(stderr, "ocr: %s\n", image.status().ToString().c_str());
    return 1;
  }
  auto recognizer = gj::models::OcrRecognizer::Create(gj::models::OcrFilesIn(fetch_dir));
  if (!recognizer.ok()) {
    std::fprintf(stderr, "ocr: %s\n", recognizer.status().ToString().c_str());
    return 1;
  }
  auto text = (*recognizer)->Recognize(*image);
  if (!text.ok()) {
    std::fprintf(stderr, "ocr: %s\n", text.status().ToString().c_str());
    return 1;
  }
  std::printf("%s\n", text->c_str());
  return 0;
}
