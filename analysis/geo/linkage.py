"""Single-linkage clustering of points in 3-D at a distance threshold, in bounded time and
memory (the tolerance stacks of :func:`analysis.geo.geometry.coordinate_stacks`)."""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

# half of the 5x5x5 block of neighbouring cubes (the other half is the same pairs reversed)
_OFFSETS = np.array(
    [o for o in itertools.product(range(-2, 3), repeat=3) if o > (0, 0, 0)], dtype=np.int64
)


def _cell_keys(cells: npt.NDArray[np.int64]) -> npt.NDArray[np.void]:
    """One opaque sortable key per row of integer cube coordinates."""
    return np.ascontiguousarray(cells).view(np.dtype((np.void, 24))).ravel()


def single_linkage(xyz: FloatArray, radius: float) -> npt.NDArray[np.int64]:
    """Component label per point of the graph that joins points at most ``radius`` apart.

    Bounded, never the O(n^2) pairs of a dense cluster: the points are binned into cubes of
    side a hair under ``radius / sqrt(3)``, so all points of one cube are within ``radius`` of
    each other and each non-empty cube is one node. Two cubes can only hold a joining pair when
    their integer coordinates differ by at most 2 on every axis (3 cubes apart is more than
    ``radius``); for each of the 62 offsets in half of that block, every point asks for its
    nearest neighbour *in the cube at that offset* (one ``cKDTree`` over ``(x, y, z, cube
    label * gap)`` with a gap larger than ``radius``, so points of other cubes are out of reach)
    and the cubes are joined when it lies within ``radius``. Connected components of the cube
    graph label the points. Time O(62 n log n), memory O(n); the same components as all pairs
    within ``radius`` (tests compare both on random inputs). A radius so small that the cube
    coordinates would overflow 64-bit integers joins the pairs within it directly
    (``cKDTree.query_pairs``)."""
    # scipy imported here, not at module level: the app's pages import this module (~0.3 s)
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import cKDTree

    n = len(xyz)
    side = radius / np.sqrt(3.0) * (1.0 - 1e-9)
    if not float(np.abs(xyz).max(initial=0.0)) < side * 2.0**62:
        # cube coordinates beyond int64 (a radius far below the points' float resolution,
        # e.g. 1e-13 m on the Earth's sphere): the pairs within it, from the KD-tree
        pairs = cKDTree(xyz).query_pairs(radius, output_type="ndarray")
        ones = np.ones(len(pairs), dtype=np.int8)
        graph = coo_matrix((ones, (pairs[:, 0], pairs[:, 1])), shape=(n, n))
        return connected_components(graph, directed=False)[1].astype(np.int64)
    cells = np.floor(xyz / side).astype(np.int64)
    keys, cell_of = np.unique(_cell_keys(cells), return_inverse=True)
    cell_of = cell_of.reshape(-1)
    m = len(keys)
    if m == 1:
        return np.zeros(n, dtype=np.int64)
    gap = 4.0 * radius + 1.0
    tree = cKDTree(np.column_stack([xyz, cell_of * gap]))
    bound = np.nextafter(radius, np.inf)
    src: list[npt.NDArray[np.int64]] = []
    dst: list[npt.NDArray[np.int64]] = []
    for offset in _OFFSETS:
        target = _cell_keys(cells + offset)
        pos = np.minimum(np.searchsorted(keys, target), m - 1)
        idx = np.flatnonzero(keys[pos] == target)  # points whose neighbour cube is not empty
        if not len(idx):
            continue
        dist, _ = tree.query(
            np.column_stack([xyz[idx], pos[idx] * gap]), distance_upper_bound=bound
        )
        near = dist <= radius
        if near.any():
            pairs = np.unique(np.column_stack([cell_of[idx[near]], pos[idx[near]]]), axis=0)
            src.append(pairs[:, 0])
            dst.append(pairs[:, 1])
    if not src:
        return cell_of.astype(np.int64)
    rows, cols = np.concatenate(src), np.concatenate(dst)
    graph = coo_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(m, m))
    _, comp = connected_components(graph, directed=False)
    return comp[cell_of].astype(np.int64)
