// The `vfssim` Python module's native part (_vfssim).
//
// It runs the same engine as the CLI, in-process: a sweep releases the GIL
// and uses all cores. Results cross into Python as the same JSON document
// `vfssim run --json` prints, so the two interfaces cannot drift apart;
// vfssim/__init__.py turns it into lists of dicts or pandas DataFrames.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "cli/report.h"
#include "models/experiment/experiment.h"
#include "models/scenario/scenario.h"

namespace py = pybind11;
using namespace vfssim;

namespace {

std::string run_json(const std::string& path, const std::vector<int>& cpus, std::uint64_t seed, int reps,
                     const std::vector<std::string>& strategies, unsigned jobs) {
  models::Scenario sc = models::load_scenario_file(path);
  models::SweepSpec spec;
  spec.cpus = cpus;
  spec.seed = seed;
  spec.reps = reps;
  spec.strategies = strategies;
  spec.jobs = jobs;
  std::vector<models::CurvePoint> curve;
  {
    py::gil_scoped_release release;
    curve = models::run_sweep(sc, spec);
  }
  return report::run_json(sc, report::RunInfo{seed, reps}, curve).dump();
}

}  // namespace

PYBIND11_MODULE(_vfssim, m) {
  m.doc() = "Native core of vfssim: the discrete-event simulator of Linux VFS locking.";
  static py::exception<models::ScenarioError> scenario_error(m, "ScenarioError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const models::ScenarioError& e) {
      PyObject* type = scenario_error.ptr();
      py::object exc = py::reinterpret_steal<py::object>(PyObject_CallFunction(type, "s", e.what()));
      exc.attr("file") = e.mark().file;
      exc.attr("line") = e.mark().line;
      exc.attr("column") = e.mark().column;
      exc.attr("problem") = e.problem();
      exc.attr("expected") = e.expected();
      PyErr_SetObject(type, exc.ptr());
    }
  });
  m.def("run_json", &run_json, py::arg("path"), py::arg("cpus") = std::vector<int>{}, py::arg("seed") = 1,
        py::arg("reps") = 1, py::arg("strategies") = std::vector<std::string>{}, py::arg("jobs") = 0u,
        "Runs a scenario file's sweep; returns the `vfssim run --json` document as text.");
  m.attr("__version__") = VFSSIM_VERSION;
}
