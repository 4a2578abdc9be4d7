"""Terrain erosion simulation: the grid, droplet, SPH and stream-power models of the erode
library, with numpy arrays in and out. Heights and cell sizes in metres, time in seconds (years
for the stream-power model)."""

import os
from typing import Any, Callable, Optional, Union

import numpy as np
from numpy.typing import NDArray

__version__: str

Array = NDArray[Any]
"""A 2-D (rows, columns) float32 or float64 array; NaN cells have no data."""
CellSize = Union[float, tuple[float, float], "Georef"]
"""Metres: one number for square cells, (x, y), or the Georef read() gave."""
Path = Union[str, os.PathLike[str]]
Parameter = Union[bool, int, float, str, list[Any], dict[str, Any]]
Progress = Callable[[int, int], object]
"""progress(done, total): units done since the model's start, and where this run ends."""

class Georef:
    """Where a heightmap lies and how big its cells are, as read() found it in the file."""

    @property
    def cell_size(self) -> tuple[float, float]:
        """(x, y), metres."""
    @property
    def transform(self) -> Optional[tuple[float, float, float, float, float, float]]:
        """GDAL's and rasterio's affine (x0, sx, 0, y0, 0, -sy), in the CRS's units."""
    @property
    def crs(self) -> Optional[str]:
        """"EPSG:code" when the file names its CRS by code."""
    @property
    def nodata(self) -> Optional[float]:
        """The nodata sample value the file declared."""
    def to_xarray(self, heights: Array, name: str = "height") -> Any:
        """An xarray.DataArray of heights with y and x cell-centre coordinates and crs, transform
        and cell_size attributes."""

class Model:
    """A model of the models' list made by name, and the base of every model class."""

    def __init__(
        self,
        name: str,
        terrain: Array,
        *,
        cell_size: Optional[CellSize] = None,
        preset: Optional[str] = None,
        maps: Optional[dict[str, Array]] = None,
        params: Optional[dict[str, Parameter]] = None,
        **parameters: Parameter,
    ) -> None: ...
    @staticmethod
    def resume(
        name: str,
        data: bytes,
        *,
        preset: Optional[str] = None,
        params: Optional[dict[str, Parameter]] = None,
        **parameters: Parameter,
    ) -> "Model": ...
    def run(self, n: int, *, progress: Optional[Progress] = None) -> None:
        """Runs n more units with the GIL released; Ctrl-C or an exception of progress stops it
        after a batch (about 0.1 s), keeping the finished batches."""
    @property
    def name(self) -> str: ...
    @property
    def unit(self) -> str:
        """What run() counts: "iteration", "droplet" or "step"."""
    @property
    def done(self) -> int:
        """Units run since the model's start."""
    def books(self) -> dict[str, float]:
        """relative_error and each named term (m³, or a ratio)."""
    def maps(self) -> dict[str, NDArray[np.floating[Any]]]:
        """Every output map by name; float64 when the terrain was float64."""
    def map(self, name: str) -> NDArray[np.floating[Any]]:
        """One output map."""
    @property
    def editable(self) -> list[str]:
        """The maps set_map() takes."""
    def set_map(self, name: str, values: Array) -> None:
        """Replaces an editable map between runs; the books move with it."""
    def checkpoint(self) -> bytes:
        """The state, for resume()."""

class Grid(Model):
    """The grid model: shallow water in virtual pipes eroding a heightmap (float32)."""

    def __init__(
        self,
        terrain: Array,
        *,
        cell_size: Optional[CellSize] = None,
        preset: str = "rivers",
        hardness: Optional[Array] = None,
        rain: Optional[Array] = None,
        sediment_depth: Optional[Array] = None,
        params: Optional[dict[str, Parameter]] = None,
        **parameters: Parameter,
    ) -> None: ...
    @staticmethod
    def resume(  # type: ignore[override]
        data: bytes,
        *,
        preset: str = "rivers",
        params: Optional[dict[str, Parameter]] = None,
        **parameters: Parameter,
    ) -> "Grid": ...
    @property
    def iterations(self) -> int: ...
    @property
    def seconds(self) -> float:
        """Seconds of storm simulated."""

class Droplets(Model):
    """The droplet model: droplets eroding a heightmap one after another (float32)."""

    def __init__(
        self,
        terrain: Array,
        *,
        cell_size: Optional[CellSize] = None,
        preset: str = "default",
        hardness: Optional[Array] = None,
        rain: Optional[Array] = None,
        params: Optional[dict[str, Parameter]] = None,
        **parameters: Parameter,
    ) -> None: ...
    @staticmethod
    def resume(  # type: ignore[override]
        data: bytes,
        *,
        lowest: float,
        preset: str = "default",
        params: Optional[dict[str, Parameter]] = None,
        **parameters: Parameter,
    ) -> "Droplets": ...
    @property
    def droplets(self) -> int: ...

class StreamPower(Model):
    """Uplift, river incision and hillslope diffusion over years (float64)."""

    def __init__(
        self,
        terrain: Array,
        *,
        cell_size: Optional[CellSize] = None,
        preset: str = "default",
        uplift_map: Optional[Array] = None,
        erodibility_map: Optional[Array] = None,
        hardness: Optional[Array] = None,
        params: Optional[dict[str, Parameter]] = None,
        **parameters: Parameter,
    ) -> None: ...
    @staticmethod
    def resume(  # type: ignore[override]
        data: bytes,
        *,
        preset: str = "default",
        params: Optional[dict[str, Parameter]] = None,
        **parameters: Parameter,
    ) -> "StreamPower": ...
    @property
    def steps(self) -> int: ...
    @property
    def years(self) -> float: ...

class Sph(Model):
    """Fluid particles eroding a triangle mesh."""

    def __init__(
        self,
        scene: Optional[str] = "tank",
        *,
        mesh: Optional[Path] = None,
        particles: int = 0,
        faces: int = 0,
        params: Optional[dict[str, Parameter]] = None,
        **parameters: Parameter,
    ) -> None: ...
    @staticmethod
    def resume(  # type: ignore[override]
        data: bytes,
        *,
        scene: Optional[str] = "tank",
        mesh: Optional[Path] = None,
        params: Optional[dict[str, Parameter]] = None,
        **parameters: Parameter,
    ) -> "Sph": ...
    @property
    def scale(self) -> Optional[dict[str, float]]:
        """A heightmap's scale model: horizontal, vertical, exaggeration, base."""
    @property
    def iterations(self) -> int: ...
    def mesh(self) -> tuple[NDArray[np.float64], NDArray[np.uint32]]:
        """(vertices (n, 3) metres, faces (m, 3) vertex indices)."""
    def particles(self) -> NDArray[np.float64]:
        """(n, 3) positions, metres."""

def models() -> list[str]:
    """The names of every model."""

def read(path: Path, *, nodata: Optional[float] = None, dtype: str = "float32") -> tuple[NDArray[np.floating[Any]], Georef]:
    """A heightmap file as (heights, georef)."""

def write(path: Path, heights: Array, *, cell_size: Optional[CellSize] = None, georef: Optional[Georef] = None) -> None:
    """Heights as a heightmap file, the format from the extension; georef puts a GeoTIFF's
    transform, CRS and nodata value back."""

def analyze(heights: Array, *, cell_size: Optional[CellSize] = None) -> dict[str, Any]:
    """The figures of `erode analyze --json`."""

def masks(
    heights: Array,
    *,
    cell_size: Optional[CellSize] = None,
    maps: Optional[dict[str, Array]] = None,
    curvature_scale: float = 0.5,
    curvature_radius: float = 2.0,
    occlusion_radius: int = 32,
    depth_scale: float = 1.0,
) -> dict[str, NDArray[np.float32]]:
    """The masks of `erode masks`, 0..1 by name."""
