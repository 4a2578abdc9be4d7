//! SPH checkpoints: the whole state (mesh, particles, what the vertices owe, books) and the
//! run's frame as bytes, versioned and checksummed, so a long run resumes where it stopped and
//! gives the same bits as a straight run.
//!
//! Layout (little-endian): magic `ERODESPH`, version (u32), [`HEADER_WORDS`] u64 words, then the
//! mesh's vertices (3 f64 each) and faces (3 u32 each), the vertices' pending, eroded and
//! deposited volumes (f64), the particles' positions and velocities (3 f64 each), sediment,
//! density and pressure (f64) and ids (u32), and last the FNV-1a checksum of all before it.

use glam::DVec3;

use super::cpu::SphFrame;
use super::mesh::TriMesh;
use super::params::SphParams;
use super::state::{SphBooks, SphState};
use crate::error::SimError;
use crate::models::grid::state::fnv1a64;

const MAGIC: &[u8; 8] = b"ERODESPH";
const VERSION: u32 = 1;
/// Header words after magic and version.
const HEADER_WORDS: usize = 21;
/// Largest vertex, face or particle count a checkpoint may claim (guards the allocations).
const MAX_ITEMS: u64 = 1 << 28;

/// A fingerprint of SPH parameters: equal parameters give equal fingerprints.
pub fn params_fingerprint(params: &SphParams) -> u64 {
    fnv1a64(format!("{params:?}").as_bytes())
}

/// `st` and the run's `frame` as checkpoint bytes; `params_fingerprint` lets a resume refuse
/// other parameters.
pub fn to_bytes(st: &SphState, frame: &SphFrame, params_fingerprint: u64) -> Vec<u8> {
    let (v, f, n) = (st.mesh.positions.len(), st.mesh.faces.len(), st.positions.len());
    let mut out = Vec::with_capacity(200 + v * 48 + f * 12 + n * 76);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    let [lo, hi] = frame.domain;
    for word in [
        params_fingerprint,
        v as u64,
        f as u64,
        n as u64,
        st.spacing.to_bits(),
        st.iteration,
        st.time.to_bits(),
        st.start_volume.to_bits(),
        st.start_particles as u64,
        st.books.eroded.to_bits(),
        st.books.deposited.to_bits(),
        st.books.outflow.to_bits(),
        st.books.particles_lost,
        frame.top_speed_bound.to_bits(),
        lo[0].to_bits(),
        lo[1].to_bits(),
        lo[2].to_bits(),
        hi[0].to_bits(),
        hi[1].to_bits(),
        hi[2].to_bits(),
        st.top_speed.to_bits(), // was reserved (0) before the state kept it: 0 m/s
    ] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    let vectors = |out: &mut Vec<u8>, vs: &[DVec3]| {
        for x in vs {
            for c in x.to_array() {
                out.extend_from_slice(&c.to_le_bytes());
            }
        }
    };
    let scalars = |out: &mut Vec<u8>, xs: &[f64]| {
        for x in xs {
            out.extend_from_slice(&x.to_le_bytes());
        }
    };
    vectors(&mut out, &st.mesh.positions);
    for face in &st.mesh.faces {
        for i in face {
            out.extend_from_slice(&i.to_le_bytes());
        }
    }
    for field in [&st.pending, &st.eroded, &st.deposited] {
        scalars(&mut out, field);
    }
    vectors(&mut out, &st.positions);
    vectors(&mut out, &st.velocities);
    for field in [&st.sediment, &st.density, &st.pressure] {
        scalars(&mut out, field);
    }
    for id in &st.ids {
        out.extend_from_slice(&id.to_le_bytes());
    }
    let sum = fnv1a64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// Reads [`to_bytes`] back, checking magic, version, checksum, parameters, sizes and the mesh's
/// indices.
pub fn from_bytes(bytes: &[u8], params_fingerprint: u64) -> Result<(SphState, SphFrame), SimError> {
    let err = |m: &str| SimError::Checkpoint(m.to_string());
    if bytes.len() < 12 + HEADER_WORDS * 8 + 8 || &bytes[..8] != MAGIC {
        return Err(err("not an erode SPH checkpoint"));
    }
    let (body, sum) = bytes.split_at(bytes.len() - 8);
    if fnv1a64(body) != u64_at(sum, 0) {
        return Err(err("checksum mismatch: the file is corrupt"));
    }
    if u32::from_le_bytes([body[8], body[9], body[10], body[11]]) != VERSION {
        return Err(err("unknown version"));
    }
    let header: Vec<u64> = (0..HEADER_WORDS).map(|k| u64_at(body, 12 + 8 * k)).collect();
    if header[0] != params_fingerprint {
        return Err(err("the parameters differ from the run that wrote it"));
    }
    let (v, f, n) = (header[1], header[2], header[3]);
    if [v, f, n].iter().any(|&c| c > MAX_ITEMS) {
        return Err(SimError::Checkpoint(format!("implausible counts: {v} vertices, {f} faces, {n} particles")));
    }
    let (v, f, n) = (v as usize, f as usize, n as usize);
    let expected = v * (24 + 24) + f * 12 + n * (48 + 24 + 4);
    let mut data = Reader { bytes: &body[12 + HEADER_WORDS * 8..], at: 0 };
    if data.bytes.len() != expected {
        return Err(err("truncated or padded"));
    }
    let mesh_positions = data.vectors(v);
    let faces: Vec<[u32; 3]> = (0..f).map(|_| [data.u32(), data.u32(), data.u32()]).collect();
    let mesh = TriMesh::new(mesh_positions, faces).map_err(|e| SimError::Checkpoint(format!("its mesh: {e}")))?;
    let (pending, eroded, deposited) = (data.scalars(v), data.scalars(v), data.scalars(v));
    let (positions, velocities) = (data.vectors(n), data.vectors(n));
    let (sediment, density, pressure) = (data.scalars(n), data.scalars(n), data.scalars(n));
    let ids: Vec<u32> = (0..n).map(|_| data.u32()).collect();
    let word = |k: usize| f64::from_bits(header[k]);
    let st = SphState {
        mesh,
        spacing: word(4),
        positions,
        velocities,
        sediment,
        ids,
        density,
        pressure,
        pending,
        eroded,
        deposited,
        books: SphBooks { eroded: word(9), deposited: word(10), outflow: word(11), particles_lost: header[12] },
        iteration: header[5],
        time: word(6),
        start_volume: word(7),
        start_particles: header[8] as usize,
        top_speed: word(20),
    };
    let frame = SphFrame {
        top_speed_bound: word(13),
        domain: [[word(14), word(15), word(16)], [word(17), word(18), word(19)]],
    };
    Ok((st, frame))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Reads the arrays in order; the caller checked the total length first.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn f64(&mut self) -> f64 {
        let x = f64::from_bits(u64_at(self.bytes, self.at));
        self.at += 8;
        x
    }
    fn u32(&mut self) -> u32 {
        let b = &self.bytes[self.at..self.at + 4];
        self.at += 4;
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
    fn scalars(&mut self, count: usize) -> Vec<f64> {
        (0..count).map(|_| self.f64()).collect()
    }
    fn vectors(&mut self, count: usize) -> Vec<DVec3> {
        (0..count).map(|_| DVec3::new(self.f64(), self.f64(), self.f64())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::sph::{SceneKind, SphSim};

    fn tank() -> (SphState, SphSim, u64) {
        let (st, sim) = SceneKind::Tank.build(300, 0).unwrap().start().unwrap();
        let fingerprint = params_fingerprint(sim.params());
        (st, sim, fingerprint)
    }

    #[test]
    fn a_checkpoint_reads_back_whole_and_refuses_damage_and_other_parameters() {
        let (mut st, mut sim, fingerprint) = tank();
        for _ in 0..20 {
            sim.step(&mut st).unwrap();
        }
        let bytes = to_bytes(&st, &sim.frame(), fingerprint);
        let (back, frame) = from_bytes(&bytes, fingerprint).unwrap();
        assert_eq!(back, st);
        assert_eq!(frame, sim.frame());
        // any flipped byte, a cut or another parameter set is an error, never a panic
        for at in [0, 9, 20, 200, bytes.len() / 2, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[at] ^= 0x40;
            assert!(from_bytes(&bad, fingerprint).is_err(), "byte {at}");
        }
        assert!(from_bytes(&bytes[..bytes.len() - 9], fingerprint).is_err());
        assert!(from_bytes(&bytes, fingerprint ^ 1).is_err());
    }
}
