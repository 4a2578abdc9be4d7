//! SPH checkpoints: the whole state (mesh, particles, what the vertices owe, books) and the
//! run's frame as bytes, versioned and checksummed, so a long run resumes where it stopped and
//! gives the same bits as a straight run.
//!
//! Layout (little-endian): magic `ERODESPH`, version (u32), `HEADER_WORDS` u64 words, then the
//! mesh's vertices (3 f64 each) and faces (3 u32 each), the vertices' pending, eroded and
//! deposited volumes (f64), the particles' positions and velocities (3 f64 each), sediment,
//! density and pressure (f64) and ids (u32); then (version 3) the inflow's books (let in,
//! held back: f64; particles let in, the cap: u64), the emitters (count, then centre,
//! velocity, radius, size, rate and what each owes: 11 f64) and the sinks (count, then min and
//! max: 6 f64); and last the FNV-1a checksum of all before it.

use glam::DVec3;

use super::cpu::Frame;
use super::inflow::{Emitter, Inflow, Sink};
use super::mesh::TriMesh;
use super::params::Params;
use super::state::{Books, State};
use crate::checkpoint::{CheckpointError, Header, Reader, Writer, fnv1a64};
use crate::error::SimError;

const MAGIC: &[u8; 8] = b"ERODESPH";
// 2: the input's hash in the header; 3: the inflow (emitters, sinks, cap, their books)
const VERSION: u32 = 3;
/// Words after magic, version and the header's parameter fingerprint (and input hash).
const HEADER_WORDS: usize = 20;
/// Largest vertex, face or particle count a checkpoint may claim (guards the allocations).
const MAX_ITEMS: u64 = 1 << 28;

/// A fingerprint of SPH parameters: equal parameters give equal fingerprints. A parameter added
/// later is left out at its default, so checkpoints from before it keep their fingerprint.
pub fn params_fingerprint(params: &Params) -> u64 {
    let text = format!("{params:?}");
    let text = if params.morphological_factor == 1.0 { text.replace("morphological_factor: 1.0, ", "") } else { text };
    fnv1a64(text.as_bytes())
}

/// `st` and the run's `frame` as checkpoint bytes; `params_fingerprint` lets a resume refuse
/// other parameters.
pub fn to_bytes(st: &State, frame: &Frame, params_fingerprint: u64) -> Vec<u8> {
    let (v, f, n) = (st.mesh.positions.len(), st.mesh.faces.len(), st.positions.len());
    let header = Header { params: params_fingerprint, input: st.input };
    let mut w = Writer::new(MAGIC, VERSION, header, 200 + v * 48 + f * 12 + n * 76);
    let [lo, hi] = frame.domain;
    for word in [
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
        w.u64(word);
    }
    let vectors = |w: &mut Writer, vs: &[DVec3]| {
        for x in vs {
            w.f64s(&x.to_array());
        }
    };
    vectors(&mut w, &st.mesh.positions);
    for face in &st.mesh.faces {
        w.u32s(face);
    }
    for field in [&st.pending, &st.eroded, &st.deposited] {
        w.f64s(field);
    }
    vectors(&mut w, &st.positions);
    vectors(&mut w, &st.velocities);
    for field in [&st.sediment, &st.density, &st.pressure] {
        w.f64s(field);
    }
    w.u32s(&st.ids);
    // version 3: the inflow and its books
    let (i, b) = (&st.inflow, &st.books);
    for word in [b.inflow.to_bits(), b.inflow_held.to_bits(), b.particles_emitted, i.particle_cap as u64] {
        w.u64(word);
    }
    w.u64(i.emitters.len() as u64);
    for (e, owed) in i.emitters.iter().zip(&st.owed) {
        w.f64s(&e.centre);
        w.f64s(&e.velocity);
        w.f64s(&[e.radius, e.size[0], e.size[1], e.rate, *owed]);
    }
    w.u64(i.sinks.len() as u64);
    for s in &i.sinks {
        w.f64s(&s.min);
        w.f64s(&s.max);
    }
    w.finish()
}

/// `n` vectors of 3 f64.
fn vectors(r: &mut Reader<'_>, n: usize) -> Result<Vec<DVec3>, CheckpointError> {
    Ok(r.f64s(n.checked_mul(3).ok_or(CheckpointError::Truncated)?)?.chunks_exact(3).map(DVec3::from_slice).collect())
}

/// Reads [`to_bytes`] back, checking magic, version, checksum, parameters, sizes and the mesh's
/// indices.
pub fn from_bytes(bytes: &[u8], params_fingerprint: u64) -> Result<(State, Frame), SimError> {
    let mut r = Reader::open(bytes, MAGIC, "SPH")?;
    r.expect_version(&[1, 2, VERSION], |_| "")?;
    let head = r.header(params_fingerprint, 2)?;
    // word 0 is the parameters' fingerprint, as it was before the header
    let mut header = vec![head.params];
    for _ in 0..HEADER_WORDS {
        header.push(r.u64()?);
    }
    let (v, f, n) = (header[1], header[2], header[3]);
    if [v, f, n].iter().any(|&c| c > MAX_ITEMS) {
        return Err(CheckpointError::Size(format!("counts: {v} vertices, {f} faces, {n} particles")).into());
    }
    let (v, f, n) = (v as usize, f as usize, n as usize);
    let expected = v * (24 + 24) + f * 12 + n * (48 + 24 + 4);
    if r.remaining() < expected {
        return Err(CheckpointError::Truncated.into());
    }
    let mesh_positions = vectors(&mut r, v)?;
    let faces: Vec<[u32; 3]> = r.u32s(3 * f)?.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
    let mesh = TriMesh::new(mesh_positions, faces).map_err(|e| CheckpointError::Invalid(format!("its mesh: {e}")))?;
    let (pending, eroded, deposited) = (r.f64s(v)?, r.f64s(v)?, r.f64s(v)?);
    let (positions, velocities) = (vectors(&mut r, n)?, vectors(&mut r, n)?);
    let (sediment, density, pressure) = (r.f64s(n)?, r.f64s(n)?, r.f64s(n)?);
    let ids = r.u32s(n)?;
    let (mut inflow, mut owed) = (Inflow::default(), Vec::new());
    let mut books = Books::default();
    if r.version >= 3 {
        books.inflow = r.f64()?;
        books.inflow_held = r.f64()?;
        books.particles_emitted = r.u64()?;
        inflow.particle_cap = usize::try_from(r.u64()?).map_err(|_| CheckpointError::Size("particle cap".into()))?;
        let emitters = r.u64()?;
        if emitters > MAX_ITEMS || r.remaining() < emitters as usize * 88 {
            return Err(CheckpointError::Truncated.into());
        }
        for _ in 0..emitters {
            let f = r.f64s(11)?;
            inflow.emitters.push(Emitter {
                centre: [f[0], f[1], f[2]],
                velocity: [f[3], f[4], f[5]],
                radius: f[6],
                size: [f[7], f[8]],
                rate: f[9],
            });
            owed.push(f[10]);
        }
        let sinks = r.u64()?;
        if sinks > MAX_ITEMS || r.remaining() < sinks as usize * 48 {
            return Err(CheckpointError::Truncated.into());
        }
        for _ in 0..sinks {
            let f = r.f64s(6)?;
            inflow.sinks.push(Sink { min: [f[0], f[1], f[2]], max: [f[3], f[4], f[5]] });
        }
    }
    r.finish()?;
    let word = |k: usize| f64::from_bits(header[k]);
    let st = State {
        input: head.input,
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
        books: Books { eroded: word(9), deposited: word(10), outflow: word(11), particles_lost: header[12], ..books },
        iteration: header[5],
        time: word(6),
        start_volume: word(7),
        start_particles: header[8] as usize,
        top_speed: word(20),
        inflow,
        owed,
    };
    let frame =
        Frame { top_speed_bound: word(13), domain: [[word(14), word(15), word(16)], [word(17), word(18), word(19)]] };
    Ok((st, frame))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::sph::{CpuSim, SceneKind};

    fn tank() -> (State, CpuSim, u64) {
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
