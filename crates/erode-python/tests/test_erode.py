"""The erode Python package: the same results as the command line, and clear errors.

Run by `cargo test` (crates/erode-cli/tests/python.rs installs the package into a virtual
environment and runs pytest here with ERODE_BIN naming the command line to compare with).
"""

import json
import os
import pathlib
import re
import subprocess
import signal
import threading
import time

import numpy as np
import pytest

import erode

ROOT = pathlib.Path(__file__).resolve().parents[3]


def cli(*args, cwd):
    exe = os.environ.get("ERODE_BIN")
    assert exe, "ERODE_BIN names the erode command line to compare with"
    subprocess.run([exe, *map(str, args), "-q"], cwd=cwd, check=True)


@pytest.fixture
def terrain(tmp_path):
    """A generated 64 x 48 ridged terrain of 2 m cells, as the command line writes it."""
    cli("generate", "--kind", "ridged", "--size", "64", "--seed", "3", "--relief", "30",
        "--cell-size", "2", "-o", "t.tif", cwd=tmp_path)
    heights, georef = erode.read(tmp_path / "t.tif")
    return heights, georef


def test_grid_gives_the_command_lines_bytes(tmp_path, terrain):
    heights, georef = terrain
    assert heights.dtype == np.float32 and georef.cell_size == (2.0, 2.0)
    cli("simulate", "grid", "t.tif", "--outputs", "all", "-o", "out", "--iterations", "150", "--format", "npy",
        "--set", "rain_rate=3e-5", cwd=tmp_path)
    sim = erode.Grid(heights, cell_size=georef, rain_rate=3e-5)
    sim.run(100)
    sim.run(50)
    assert sim.iterations == 150
    maps = sim.maps()
    for name in ["height", "water", "sediment", "sediment_depth", "erosion", "deposition"]:
        want = np.load(tmp_path / "out" / f"{name}.npy")
        assert maps[name].dtype == np.float32 and maps[name].shape == heights.shape
        assert maps[name].tobytes() == want.astype(np.float32).tobytes(), name
    books = sim.books()
    assert books["relative_error"] < 1e-5 and books["eroded"] > 0


def test_droplets_give_the_command_lines_bytes(tmp_path, terrain):
    heights, georef = terrain
    cli("simulate", "droplet", "t.tif", "--outputs", "all", "-o", "out", "--droplets", "3000", "--format", "npy",
        "--set", "radius=3", cwd=tmp_path)
    sim = erode.Droplets(heights, cell_size=georef.cell_size, params={"radius": 3})
    sim.run(3000)
    assert sim.droplets == 3000
    for name in ["height", "erosion", "deposition"]:
        want = np.load(tmp_path / "out" / f"{name}.npy")
        assert sim.maps()[name].tobytes() == want.astype(np.float32).tobytes(), name
    assert sim.books()["books_relative_error"] == 0.0


def test_stream_power_gives_the_command_lines_bytes(tmp_path):
    cli("generate", "--kind", "noise", "--size", "48", "--relief", "1", "--cell-size", "100",
        "-o", "p.tif", cwd=tmp_path)
    cli("simulate", "stream-power", "p.tif", "--outputs", "all", "-o", "out", "--years", "3e5", "--dt-years", "3e4",
        "--format", "npy", cwd=tmp_path)
    heights, georef = erode.read(tmp_path / "p.tif")
    cell = georef.cell_size
    sim = erode.StreamPower(heights, cell_size=cell[0], dt_years=3e4)
    sim.run(10)
    assert sim.steps == 10 and sim.years == 3e5
    for name in ["height", "drainage_area", "erosion_rate", "uplift"]:
        want = np.load(tmp_path / "out" / f"{name}.npy")
        assert sim.maps()[name].tobytes() == want.astype(np.float32).tobytes(), name
    assert sim.books()["relative_error"] < 1e-9
    again = erode.StreamPower.resume(sim.checkpoint(), dt_years=3e4)
    assert again.steps == 10
    with pytest.raises(ValueError, match="`n`"):
        erode.StreamPower(heights, cell_size=cell[0], n=0.0)
    # multiple flow directions, a string parameter, the same way
    cli("simulate", "stream-power", "p.tif", "--outputs", "all", "-o", "mfd", "--years", "3e5", "--dt-years", "3e4",
        "--set", "flow=mfd", "--format", "npy", cwd=tmp_path)
    mfd = erode.StreamPower(heights, cell_size=cell[0], dt_years=3e4, flow="mfd")
    mfd.run(10)
    for name in ["height", "drainage_area"]:
        want = np.load(tmp_path / "mfd" / f"{name}.npy")
        assert mfd.maps()[name].tobytes() == want.astype(np.float32).tobytes(), name
    assert mfd.maps()["drainage_area"].tobytes() != sim.maps()["drainage_area"].tobytes()


def test_every_model_made_by_name_gives_the_command_lines_bytes(tmp_path, terrain):
    """Each model the list makes by name (erode.Model), with its first input map, as the command
    line's own subcommand runs it; a resume goes on to the same bytes."""
    heights, georef = terrain
    cell = georef.cell_size
    steep = heights * 8
    erode.write(tmp_path / "steep.tif", steep, cell_size=cell[0])
    ramp = np.tile(np.linspace(0, 1, heights.shape[1], dtype=np.float32), (heights.shape[0], 1))
    erode.write(tmp_path / "ramp.tif", ramp, cell_size=cell[0])
    made = [m for m in erode.models() if m not in ("grid", "droplet", "stream-power", "sph")]
    assert "thermal" in made
    for name in made:
        sim = erode.Model(name, steep, cell_size=cell[0], maps={"hardness": ramp})
        unit = sim.unit
        cli("simulate", name, "steep.tif", "--outputs", "all", "-o", name, f"--{unit}s", "20", "--format", "npy",
            "--hardness-map", "ramp.tif", cwd=tmp_path)
        sim.run(12)
        again = erode.Model.resume(name, sim.checkpoint())
        sim.run(8)
        again.run(8)
        assert sim.done == again.done == 20 and sim.name == name
        for map_name, field in sim.maps().items():
            want = np.load(tmp_path / name / f"{map_name}.npy")
            assert field.tobytes() == want.astype(np.float32).tobytes(), (name, map_name)
            assert again.maps()[map_name].tobytes() == field.tobytes(), (name, map_name)
        books = sim.books()
        assert books["relative_error"] < 1e-9 and books["eroded"] > 0, (name, books)
        with pytest.raises(ValueError, match="no_such_parameter"):
            erode.Model(name, steep, cell_size=cell[0], no_such_parameter=1)
        with pytest.raises(ValueError, match="reads"):
            erode.Model(name, steep, cell_size=cell[0], maps={"no_such_map": ramp})
    with pytest.raises(ValueError, match="made by name"):
        erode.Model("no-such-model", steep)


def test_analyze_gives_the_command_lines_figures(tmp_path, terrain):
    heights, georef = terrain
    out = subprocess.run([os.environ["ERODE_BIN"], "analyze", "t.tif", "--json"], cwd=tmp_path,
                         check=True, capture_output=True, text=True).stdout
    assert erode.analyze(heights, cell_size=georef) == json.loads(out)
    # float64 heights that are float32 values give the same figures
    assert erode.analyze(heights.astype(np.float64), cell_size=georef) == json.loads(out)
    with pytest.raises(TypeError, match="float32 or float64"):
        erode.analyze(heights.astype(np.int32))


def test_hardness_and_rain_maps_act_as_on_the_command_line(tmp_path, terrain):
    heights, georef = terrain
    cell = georef.cell_size
    rock = np.ones_like(heights)
    rock[:, : heights.shape[1] // 2] = 0.0
    erode.write(tmp_path / "rock.tif", rock)
    cli("simulate", "grid", "t.tif", "-o", "out", "--iterations", "60", "--format", "npy",
        "--hardness-map", "rock.tif", cwd=tmp_path)
    sim = erode.Grid(heights, cell_size=cell[0], hardness=rock)
    sim.run(60)
    want = np.load(tmp_path / "out" / "height.npy")
    assert sim.maps()["height"].tobytes() == want.astype(np.float32).tobytes()
    plain = erode.Grid(heights, cell_size=cell[0])
    plain.run(60)
    assert plain.maps()["height"].tobytes() != sim.maps()["height"].tobytes()
    rain = np.zeros_like(heights)
    rain[:8, :8] = 1.0
    drops = erode.Droplets(heights, cell_size=cell[0], rain=rain)
    drops.run(500)
    assert drops.maps()["flow"][:8, :8].sum() > 0
    with pytest.raises(ValueError, match="hardness"):
        erode.Grid(heights, hardness=rock[:10])
    with pytest.raises(ValueError, match="rain"):
        erode.Droplets(heights, rain=np.zeros_like(heights))


def test_checkpoints_resume_to_the_same_result(terrain):
    heights, _ = terrain
    grid = erode.Grid(heights, preset="badlands")
    grid.run(40)
    later = erode.Grid.resume(grid.checkpoint(), preset="badlands")
    grid.run(30)
    later.run(30)
    assert later.maps()["height"].tobytes() == grid.maps()["height"].tobytes()

    drops = erode.Droplets(heights)
    drops.run(1024)
    again = erode.Droplets.resume(drops.checkpoint(), lowest=float(heights.min()))
    drops.run(1024)
    again.run(1024)
    assert again.maps()["height"].tobytes() == drops.maps()["height"].tobytes()

    sph = erode.Sph("tank", particles=300)
    sph.run(5)
    resumed = erode.Sph.resume(sph.checkpoint(), scene="tank")
    sph.run(5)
    resumed.run(5)
    assert resumed.particles().tobytes() == sph.particles().tobytes()
    vertices, faces = sph.mesh()
    assert vertices.shape[1] == 3 and faces.shape[1] == 3 and faces.dtype == np.uint32
    assert sph.books()["relative_error"] <= 1e-6


def test_sph_starts_from_a_mesh_file_as_the_command_line_does(tmp_path):
    corners = [f"v {10 * (k >> 2 & 1)} {10 * (k >> 1 & 1)} {10 * (k & 1)}" for k in range(8)]
    faces = ["1 2 4", "1 4 3", "5 7 8", "5 8 6", "1 5 6", "1 6 2", "3 4 8", "3 8 7", "1 3 7", "1 7 5",
             "2 6 8", "2 8 4"]
    (tmp_path / "cube.obj").write_text("\n".join(corners + [f"f {f}" for f in faces]) + "\n")
    sph = erode.Sph(None, mesh=tmp_path / "cube.obj", particles=300)
    sph.run(3)
    assert sph.iterations == 3 and 0 < sph.particles().shape[0] <= 300
    with pytest.raises(ValueError, match="brings its own mesh"):
        erode.Sph("lake", mesh=tmp_path / "cube.obj")
    assert sph.scale is None


def test_sph_runs_a_heightmap_as_a_scale_model(tmp_path, terrain):
    # 126 m across, 30 m of relief: 4 m across, exaggerated to 1 m of relief
    sph = erode.Sph(None, mesh=tmp_path / "t.tif", particles=500, faces=800)
    sph.run(3)
    s = sph.scale
    assert abs(s["horizontal"] * 126 - 4) < 1e-9 and s["exaggeration"] > 1
    vertices, _ = sph.mesh()
    assert vertices[:, 0].max() <= 4 + 1e-9


def test_bad_arguments_raise_with_the_command_lines_messages(terrain, tmp_path):
    heights, _ = terrain
    with pytest.raises(TypeError, match="float32 or float64"):
        erode.Grid(heights.astype(np.int16))
    with pytest.raises(TypeError, match="float32 or float64"):
        erode.Grid([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError, match="float32 or float64"):
        erode.Grid(heights[None])
    with pytest.raises(TypeError, match="bool, int, float, str, list or dict"):
        erode.Grid(heights, rain_rate=object())
    with pytest.raises(ValueError, match="rain_rate"):
        erode.Grid(heights, rain_rate=[1])
    for cell in ["2", (1.0, 2.0, 3.0), None.__class__]:
        with pytest.raises(TypeError, match="cell_size"):
            erode.Grid(heights, cell_size=cell)
    with pytest.raises(ValueError, match="cell_size"):
        erode.Grid(heights, cell_size=(2.0, -1.0))
    with pytest.raises(ValueError, match="dtype"):
        erode.read(tmp_path / "any.tif", dtype="int8")
    with pytest.raises(ValueError, match="rian_rate"):
        erode.Grid(heights, rian_rate=1e-5)
    with pytest.raises(ValueError, match="dt"):
        erode.Grid(heights, dt=-1.0)
    # the cell size's bound and the parameters' bounds are the command line's
    for cell in [0.0, 1e-30, float("nan"), 1e300]:
        with pytest.raises(ValueError, match="cell_size"):
            erode.Grid(heights, cell_size=cell)
    with pytest.raises(ValueError, match="friction"):
        erode.Grid(heights, friction=1e30)
    with pytest.raises(ValueError, match="lunar"):
        erode.Droplets(heights, preset="lunar")
    with pytest.raises(ValueError, match="checksum|truncated|not an erode"):
        erode.Grid.resume(b"ERODEGRD" + bytes(40))
    with pytest.raises(ValueError, match="scene moon"):
        erode.Sph("moon")
    with pytest.raises(OSError, match="missing.tif"):
        erode.read(tmp_path / "missing.tif")


def test_files_round_trip_with_nodata(tmp_path):
    heights = np.arange(12 * 10, dtype=np.float32).reshape(12, 10)
    heights[3, 4] = np.nan
    # a GeoTIFF declares its nodata value; NPY and EXR hold NaN, declared on reading
    for ext, nodata in [("tif", None), ("npy", float("nan")), ("exr", float("nan"))]:
        erode.write(tmp_path / f"h.{ext}", heights, cell_size=5.0)
        back, georef = erode.read(tmp_path / f"h.{ext}", nodata=nodata)
        assert back.shape == (12, 10), ext
        if ext == "tif":  # NPY and EXR hold no cell size
            assert georef.cell_size == (5.0, 5.0), ext
        assert np.isnan(back[3, 4]) and np.array_equal(np.isnan(back), np.isnan(heights)), ext
    with pytest.raises(OSError, match="NaN"):
        erode.read(tmp_path / "h.npy")
        assert np.array_equal(back[~np.isnan(back)], heights[~np.isnan(heights)]), ext


def test_run_releases_the_gil(terrain):
    heights, _ = terrain
    sim = erode.Grid(np.tile(heights, (4, 4)))
    ticks = 0
    worker = threading.Thread(target=sim.run, args=(200,))
    worker.start()
    while worker.is_alive():
        ticks += 1
    worker.join()
    # with the GIL held through the run, this thread would not get to count
    assert ticks > 1000 and sim.iterations == 200


def test_the_readmes_python_example_runs_as_written(tmp_path, monkeypatch):
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "README.md has a Python example"
    monkeypatch.chdir(tmp_path)
    exec(compile(blocks[0], "README.md", "exec"), {})
    assert (tmp_path / "eroded.tif").exists()


def test_masks_are_the_command_lines(tmp_path, terrain):
    heights, georef = terrain
    cell = georef.cell_size
    cli("simulate", "grid", "t.tif", "-o", "run", "--iterations", "30", "--outputs", "erosion", cwd=tmp_path)
    height, _ = erode.read(tmp_path / "run" / "height.tif")
    erosion, _ = erode.read(tmp_path / "run" / "erosion.tif")
    cli("masks", "run/height.tif", "run", "-o", "tex", "--format", "tif", "--only",
        "slope,flow,occlusion,erosion", cwd=tmp_path)
    got = erode.masks(height, cell_size=cell[0], maps={"erosion": erosion})
    assert sorted(got) == sorted(["slope", "curvature", "flow", "wetness", "occlusion", "talus", "erosion"])
    for name in ["slope", "flow", "occlusion", "erosion"]:
        want, _ = erode.read(tmp_path / "tex" / f"{name}.tif")
        assert got[name].tobytes() == want.tobytes(), name
        assert got[name].min() >= 0.0 and got[name].max() <= 1.0
    with pytest.raises(ValueError, match="sediment_depth"):
        erode.masks(height, cell_size=cell[0], maps={"rain": erosion})
    with pytest.raises(ValueError, match="curvature_scale"):
        erode.masks(height, curvature_scale=0.0)


def test_float64_goes_in_and_comes_back(terrain):
    """float64 heights run as their float32 values in the float32 models and come back float64;
    the stream-power model, which computes in float64, keeps every digit."""
    heights, georef = terrain
    narrow = erode.Grid(heights, cell_size=georef)
    wide = erode.Grid(heights.astype(np.float64), cell_size=georef)
    narrow.run(20)
    wide.run(20)
    for name, field in wide.maps().items():
        assert field.dtype == np.float64, name
        assert np.array_equal(field, narrow.map(name).astype(np.float64), equal_nan=True), name
    # digits a float32 drops stay through the stream-power model
    fine = heights.astype(np.float64) * 10 + 1e-6 * np.arange(heights.size).reshape(heights.shape)
    assert not np.array_equal(fine.astype(np.float32).astype(np.float64), fine)
    sp = erode.StreamPower(fine, cell_size=georef)
    assert sp.map("height").dtype == np.float64 and np.array_equal(sp.map("height"), fine)
    sp.run(2)
    edited = sp.map("height") + 1e-7
    sp.set_map("height", edited)
    assert np.array_equal(sp.map("height"), edited)


def test_any_memory_order_gives_the_same_run(terrain):
    """C order, Fortran order and a strided view are read the same (copied once, in logical order,
    into the model's own memory: the caller's array is never changed)."""
    heights, georef = terrain
    c = np.ascontiguousarray(heights)
    f = np.asfortranarray(heights)
    strided = np.repeat(np.repeat(heights, 2, axis=0), 2, axis=1)[::2, ::2]
    assert f.flags.f_contiguous and not strided.flags.c_contiguous
    results = []
    for a in [c, f, strided]:
        before = a.copy()
        sim = erode.Grid(a, cell_size=georef)
        sim.run(15)
        assert np.array_equal(a, before)
        results.append(sim.map("height").tobytes())
    assert results[0] == results[1] == results[2]


def test_cell_size_as_a_pair_runs_as_the_files_does(tmp_path, terrain):
    heights, _ = terrain
    erode.write(tmp_path / "oblong.tif", heights, cell_size=(2.0, 3.0))
    back, georef = erode.read(tmp_path / "oblong.tif")
    assert georef.cell_size == (2.0, 3.0)
    cli("simulate", "grid", "oblong.tif", "-o", "out", "--iterations", "40", "--format", "npy", cwd=tmp_path)
    sim = erode.Grid(back, cell_size=(2.0, 3.0))
    sim.run(40)
    want = np.load(tmp_path / "out" / "height.npy")
    assert sim.map("height").tobytes() == want.astype(np.float32).tobytes()
    square = erode.Grid(back, cell_size=2.0)
    square.run(40)
    assert square.map("height").tobytes() != sim.map("height").tobytes()


def real_dem(name):
    path = ROOT / "testdata" / name
    if not path.exists():
        if os.environ.get("ERODE_REQUIRE_DATA") == "1":
            pytest.fail(f"{path} is missing (scripts/fetch-testdata.sh fetches it)")
        pytest.skip(f"{path} is missing: run scripts/fetch-testdata.sh")
    return path


@pytest.mark.parametrize("name, crs, nodata", [("terra-elev.tif", "EPSG:4326", -32768.0),
                                               ("lidar-dem.tif", "EPSG:26915", None)])
def test_a_real_dems_georeference_survives_a_run(tmp_path, name, crs, nodata):
    heights, georef = erode.read(real_dem(name))
    assert georef.crs == crs
    x0, sx, zero, y0, zero2, sy = georef.transform
    assert sx > 0 and sy < 0 and zero == zero2 == 0
    if nodata is not None:
        assert georef.nodata == nodata and np.isnan(heights).any()
    if crs == "EPSG:4326":
        # degrees, so the cell size in metres differs along x and y (Luxembourg, 49.8° N)
        cx, cy = georef.cell_size
        assert 550 < cx < 650 and 900 < cy < 950
    sim = erode.Grid(heights, cell_size=georef)
    sim.run(10)
    erode.write(tmp_path / "out.tif", sim.map("height"), georef=georef)
    back, again = erode.read(tmp_path / "out.tif")
    assert (again.crs, again.transform, again.cell_size) == (georef.crs, georef.transform, georef.cell_size)
    assert np.array_equal(np.isnan(back), np.isnan(heights))
    if nodata is not None:
        assert again.nodata == nodata
    # as rasterio and xarray see it: cell centres from the transform
    xr = pytest.importorskip("xarray") if os.environ.get("ERODE_REQUIRE_PYTHON") != "1" else __import__("xarray")
    da = georef.to_xarray(back)
    assert isinstance(da, xr.DataArray) and da.dims == ("y", "x") and da.attrs["crs"] == crs
    assert da.x.values[0] == pytest.approx(x0 + sx / 2) and da.y.values[-1] == pytest.approx(y0 + sy * (back.shape[0] - 0.5))
    assert repr(georef).startswith("Georef(cell_size=")


def test_ctrl_c_stops_a_run_at_the_next_batch_and_it_goes_on(terrain):
    """A SIGINT sent from another thread stops `run` within a batch (about 0.1 s) with
    KeyboardInterrupt; the finished batches stay and the run goes on to an unbroken run's bytes."""
    heights, georef = terrain
    big = np.tile(heights, (4, 4))
    sim = erode.Grid(big, cell_size=georef)
    # Python raises KeyboardInterrupt only if SIGINT was not ignored when it started (a job put in
    # the background by a shell without job control, e.g. `nohup cmd &`, ignores it): the test
    # sets Python's own handler, so that it cannot run on for ever
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            sim.run(10**9)
    finally:
        timer.join()
        signal.signal(signal.SIGINT, previous)
    stopped_after = time.monotonic() - started
    done = sim.iterations
    assert 0 < done < 10**9 and stopped_after < 5, (done, stopped_after)
    sim.run(7)
    whole = erode.Grid(big, cell_size=georef)
    whole.run(done + 7)
    assert sim.iterations == whole.iterations == done + 7
    assert sim.map("height").tobytes() == whole.map("height").tobytes()


def test_progress_is_called_after_each_batch_and_can_stop_the_run(terrain):
    heights, georef = terrain
    sim = erode.Grid(np.tile(heights, (2, 2)), cell_size=georef)
    seen = []
    sim.run(300, progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1] == (300, 300) and all(t == 300 for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)

    class Enough(Exception):
        pass

    def stop(done, total):
        if done >= 350:
            raise Enough

    with pytest.raises(Enough):
        sim.run(10**9, progress=stop)
    assert 350 <= sim.iterations < 10**9
    with pytest.raises(TypeError):
        sim.run(5, progress=3)


def test_river_sources_run_as_the_command_lines(tmp_path, terrain):
    heights, georef = terrain
    cli("simulate", "grid", "t.tif", "-o", "out", "--iterations", "80", "--format", "npy", "--outputs", "water",
        "--set", "rain_rate=0", "--set", "sources=[{x = 20, y = 10, rate = 0.5, radius = 2}]", cwd=tmp_path)
    sim = erode.Grid(heights, cell_size=georef, rain_rate=0, sources=[{"x": 20, "y": 10, "rate": 0.5, "radius": 2}])
    sim.run(80)
    for name in ["height", "water"]:
        want = np.load(tmp_path / "out" / f"{name}.npy")
        assert sim.map(name).tobytes() == want.astype(np.float32).tobytes(), name
    assert sim.map("water")[10, 20] > 0 and sim.books()["relative_error"] < 1e-5
    with pytest.raises(ValueError, match="sources"):
        erode.Grid(heights, sources=[{"x": 1, "y": 1}])


def test_state_reads_and_edits_between_runs(terrain):
    heights, georef = terrain
    sim = erode.Grid(heights, cell_size=georef)
    assert set(sim.editable) == {"height", "water", "hardness"}
    assert isinstance(sim, erode.Model) and sim.name == "grid" and sim.unit == "iteration"
    sim.run(10)
    flooded = sim.map("water") + 0.5
    sim.set_map("water", flooded)
    assert np.array_equal(sim.map("water"), flooded)
    raised = sim.map("height") + 1.0
    sim.set_map("height", raised)
    assert np.array_equal(sim.map("height"), raised)
    sim.run(10)
    assert sim.books()["relative_error"] < 1e-5
    with pytest.raises(ValueError, match="editable"):
        sim.set_map("sediment", flooded)
    with pytest.raises(ValueError, match="rows"):
        sim.set_map("water", flooded[:5])
    with pytest.raises(ValueError, match="gives"):
        sim.map("no_such_map")


def test_the_type_stubs_name_what_the_module_has():
    """erode's stubs (__init__.pyi, shipped with py.typed) declare every public name of the module
    and every method and property of its classes, and nothing it lacks."""
    import ast
    import importlib.util
    import types

    where = pathlib.Path(importlib.util.find_spec("erode").origin).parent
    stub = where / "__init__.pyi"
    assert stub.exists() and (where / "py.typed").exists(), sorted(p.name for p in where.iterdir())
    declared = {}
    for node in ast.parse(stub.read_text()).body:
        if isinstance(node, ast.ClassDef):
            declared[node.name] = {n.name if isinstance(n, ast.FunctionDef) else n.target.id
                                   for n in node.body if isinstance(n, (ast.FunctionDef, ast.AnnAssign))}
        elif isinstance(node, ast.FunctionDef):
            declared[node.name] = None
        elif isinstance(node, ast.AnnAssign):
            declared[node.target.id] = None
    public = {n for n, v in vars(erode).items() if not n.startswith("_") and not isinstance(v, types.ModuleType)}
    assert set(declared) == public | {"__version__"}
    for name, members in declared.items():
        if members is None:
            continue
        cls = getattr(erode, name)
        own = {m for m in vars(cls) if not m.startswith("_")}
        assert own <= members, (name, own - members)
        lacking = {m for m in members - {"__init__"} if not hasattr(cls, m)}
        assert not lacking, (name, lacking)


def test_the_python_pages_walk_through_runs_and_prints_what_it_shows(tmp_path, monkeypatch, capsys):
    """docs/python.md's Python blocks, run in order as written (from a folder where testdata/ is
    the repository's), print what its text blocks show and draw the plot."""
    real_dem("jacksboro-dem.npy")
    real_dem("lidar-dem.tif")
    text = (ROOT / "docs" / "python.md").read_text()
    blocks = re.findall(r"```(python|text)\n(.*?)```", text, re.S)
    (tmp_path / "testdata").symlink_to(ROOT / "testdata")
    monkeypatch.chdir(tmp_path)
    namespace = {}
    printed, shown = [], []
    for kind, body in blocks:
        if kind == "python":
            exec(compile(body, "docs/python.md", "exec"), namespace)
            out = capsys.readouterr().out
            printed += [line.split("\r")[-1] for line in out.split("\n")[:-1]]
        else:
            shown += body.splitlines()
    assert printed == shown
    assert (tmp_path / "slope-area.png").stat().st_size > 10_000
    assert (tmp_path / "eroded.tif").exists()
