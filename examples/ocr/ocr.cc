// Reads text from an image with PaddleOCR's PP-OCRv4 models compiled by graphjit: the
// ONNX models imported, run under compiler::Jit, their outputs decoded.
//
//   ocr LINE.ppm [FETCH_DIR]         one text line: prints its text
//   ocr --page PAGE.ppm [FETCH_DIR]  a page: the detector finds the lines, the angle
//                                    classifier turns upside-down ones, the recognizer
//                                    reads each; prints "x0 y0 x1 y1 text" per line in
//                                    reading order ("(turned)" after the box if turned)
//
// FETCH_DIR: where scripts/fetch_models.sh put the models (default $GRAPHJIT_FETCH_DIR or
// third_party/fetched). The images are binary PPMs (scripts/render_text_line.py draws a
// line, or a page with --page); a line is resized to height 48 if it is not. Exit 1 with a
// message on error.
#include "models/ocr.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "models/ocr_page.h"

namespace {

// Says why on stderr; the exit status 1.
int Fail(const absl::Status& status) {
  std::fprintf(stderr, "ocr: %s\n", status.ToString().c_str());
  return 1;
}

int ReadPage(const std::string& path, const std::string& fetch_dir) {
  namespace gj = graphjit;
  auto page = gj::models::ReadPpm(path);
  if (!page.ok()) return Fail(page.status());
  auto reader = gj::models::OcrPageReader::Create(gj::models::OcrPageFilesIn(fetch_dir));
  if (!reader.ok()) return Fail(reader.status());
  auto lines = (*reader)->Read(*page);
  if (!lines.ok()) return Fail(lines.status());
  for (const gj::models::OcrLine& l : *lines) {
    std::printf("%lld %lld %lld %lld%s %s\n", static_cast<long long>(l.box.x0),
                static_cast<long long>(l.box.y0), static_cast<long long>(l.box.x1),
                static_cast<long long>(l.box.y1), l.turned ? " (turned)" : "", l.text.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  namespace gj = graphjit;
  if (argc >= 3 && argc <= 4 && std::strcmp(argv[1], "--page") == 0) {
    return ReadPage(argv[2], argc == 4 ? argv[3] : gj::models::OcrFetchDir("."));
  }
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s LINE.ppm [FETCH_DIR]\n       %s --page PAGE.ppm [FETCH_DIR]\n",
                 argv[0], argv[0]);
    return 1;
  }
  const std::string fetch_dir = argc == 3 ? argv[2] : gj::models::OcrFetchDir(".");
  auto image = gj::models::ReadPpm(argv[1]);
  if (!image.ok()) return Fail(image.status());
  auto recognizer = gj::models::OcrRecognizer::Create(gj::models::OcrFilesIn(fetch_dir));
  if (!recognizer.ok()) return Fail(recognizer.status());
  auto text = (*recognizer)->Recognize(*image);
  if (!text.ok()) return Fail(text.status());
  std::printf("%s\n", text->c_str());
  return 0;
}
