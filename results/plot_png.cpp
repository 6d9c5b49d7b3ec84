// The PNG renderer of `vfssim run --plot FILE.png`: the SVG that plot_svg()
// writes, drawn by librsvg onto a cairo image surface, in-process (no
// second drawing code path, no external program). Built only when CMake
// finds librsvg-2.0 and cairo (Debian: librsvg2-dev); otherwise
// png_supported() is false and check_plot_path() refuses .png up front.
#include "results/plot.h"

#include <stdexcept>

#ifdef VFSSIM_HAVE_RSVG
#include <cairo.h>
#include <librsvg/rsvg.h>
#endif

namespace vfssim::report {

#ifdef VFSSIM_HAVE_RSVG

namespace {

cairo_status_t append(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

bool png_supported() { return true; }

std::string svg_to_png(const std::string& svg) {
  GError* error = nullptr;
  RsvgHandle* handle =
      rsvg_handle_new_from_data(reinterpret_cast<const guint8*>(svg.data()), svg.size(), &error);
  if (!handle) {
    const std::string why = error ? error->message : "unknown error";
    if (error) g_error_free(error);
    throw std::runtime_error("PNG rendering (librsvg) failed: " + why);
  }
  gdouble w = 0, h = 0;
  if (!rsvg_handle_get_intrinsic_size_in_pixels(handle, &w, &h) || w <= 0 || h <= 0) {
    g_object_unref(handle);
    throw std::runtime_error("PNG rendering (librsvg) failed: the SVG has no size");
  }
  cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, static_cast<int>(w), static_cast<int>(h));
  cairo_t* cr = cairo_create(surface);
  const RsvgRectangle viewport{0, 0, w, h};
  const bool ok = rsvg_handle_render_document(handle, cr, &viewport, &error);
  std::string png, why;
  if (!ok) why = error ? error->message : "unknown error";
  if (error) g_error_free(error);
  cairo_destroy(cr);
  if (ok && cairo_surface_write_to_png_stream(surface, append, &png) != CAIRO_STATUS_SUCCESS)
    why = "cairo could not encode the PNG";
  cairo_surface_destroy(surface);
  g_object_unref(handle);
  if (!why.empty()) throw std::runtime_error("PNG rendering (librsvg) failed: " + why);
  return png;
}

#else

bool png_supported() { return false; }

std::string svg_to_png(const std::string&) {
  throw std::runtime_error("PNG output needs librsvg and cairo: this vfssim was built without them "
                           "(install librsvg2-dev and rebuild)");
}

#endif

}  // namespace vfssim::report
