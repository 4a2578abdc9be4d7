//! Bad input, table-driven: every case must exit with status 2 and one line naming the file or
//! parameter, leave nothing behind (no output folder, no file), and be refused fast and small:
//! under 2 s and under 200 MB peak resident size each (measured with GNU time, `/usr/bin/time`,
//! which `.ci/run` installs; without it the memory is not checked, and the test says so).

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use std::process::Command;

use common::{erode, files_in, ok};

/// Files the cases read: good ones and bad ones.
fn fixtures(d: &Path) {
    ok(&["generate", "--size", "16", "-o", "good.tif"], d);
    ok(&["generate", "--size", "16", "-o", "good.png"], d);
    ok(&["generate", "--size", "32", "-o", "other.tif"], d);
    std::fs::write(d.join("garbage.png"), b"this is not a png").unwrap();
    std::fs::write(d.join("empty.tif"), b"").unwrap();
    std::fs::write(d.join("plain"), b"x").unwrap();
    let floats = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    std::fs::write(d.join("row.r32"), floats(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])).unwrap();
    std::fs::write(d.join("nan.r32"), floats(&[1.0, f32::NAN, 3.0, 4.0])).unwrap();
    // maps of the good terrain's size: heights 0..1 read as hardness or rain
    let sixteen = |name: &str, value: f32| {
        let bytes = floats(&[value; 256]);
        std::fs::write(d.join(name), bytes).unwrap();
    };
    sixteen("zero.r32", 0.0);
    sixteen("negative.r32", -1.0);
    sixteen("five.r32", 5.0);
    ok(&["convert", "zero.r32", "-o", "zero.tif"], d);
    ok(&["convert", "negative.r32", "-o", "negative.tif"], d);
    ok(&["convert", "five.r32", "-o", "five.tif"], d);
    for f in ["zero.r32", "negative.r32", "five.r32"] {
        std::fs::remove_file(d.join(f)).unwrap();
    }
    std::fs::write(d.join("bad.toml"), "gravity = \"strong\"\n").unwrap();
    std::fs::write(d.join("open.obj"), "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n").unwrap();
    std::fs::write(d.join("inward.obj"), cubes(&[[0.0; 3]], true)).unwrap();
    // two closed cubes overlapping by 5 m on each axis (edges cross faces along their diagonals)
    std::fs::write(d.join("overlap.obj"), cubes(&[[0.0; 3], [5.0; 3]], false)).unwrap();
    tiff_with(d, "badnodata.tif", |img| img.encoder().write_tag(tiff::tags::Tag::GdalNodata, "abc").unwrap());
    // metadata out of bounds: cells of 1e-30 m, a NaN pixel scale, an inverted height range
    for (name, scale) in [("tinycells.tif", 1e-30), ("nanscale.tif", f64::NAN)] {
        tiff_with(d, name, |img| {
            img.encoder().write_tag(tiff::tags::Tag::ModelPixelScaleTag, &[scale, scale, 0.0][..]).unwrap();
            img.encoder()
                .write_tag(tiff::tags::Tag::ModelTiepointTag, &[0.0, 0.0, 0.0, 500.0, 900.0, 0.0][..])
                .unwrap();
        });
    }
    ok(&["generate", "--size", "16", "--cell-size", "2", "-o", "meta.pgm"], d);
    let pgm = std::fs::read(d.join("meta.pgm")).unwrap();
    let edit = |from: &str, to: &str| {
        let text = String::from_utf8_lossy(&pgm[..80]).into_owned();
        let at = text.find(from).unwrap();
        [&pgm[..at], to.as_bytes(), &pgm[at + from.len()..]].concat()
    };
    std::fs::write(d.join("tinycells.pgm"), edit("cell_size=2e0x2e0", "cell_size=1e-30x1e-30")).unwrap();
    std::fs::write(d.join("inverted.pgm"), edit("min_height=0e0 max_height=", "min_height=9e9 max_height=")).unwrap();
    std::fs::remove_file(d.join("meta.pgm")).unwrap();
    // readers check before they read: a FIFO (it would block), a 5 GiB sparse raw file, a PLY
    // whose header claims forty elements of 50 million vertices in a few hundred bytes
    assert!(Command::new("mkfifo").arg(d.join("pipe.tif")).status().unwrap().success());
    std::fs::File::create(d.join("huge.r32")).unwrap().set_len(5 << 30).unwrap();
    let bomb: String = (0..40).map(|_| "element vertex 50000000\nproperty float x\n").collect();
    std::fs::write(d.join("bomb.ply"), format!("ply\nformat ascii 1.0\n{bomb}end_header\n0\n")).unwrap();
    // heightmaps whose headers claim 16000 x 16000 cells (1 GB of floats) in a few hundred bytes:
    // a PNG, a PGM, an uncompressed and a deflated TIFF
    let png_chunk = |kind: &[u8], data: &[u8]| {
        let body = [kind, data].concat();
        [&(data.len() as u32).to_be_bytes()[..], &body, &crc32(&body).to_be_bytes()].concat()
    };
    let ihdr = [&16000u32.to_be_bytes()[..], &16000u32.to_be_bytes(), &[16, 0, 0, 0, 0]].concat();
    // a stored (uncompressed) deflate block of 1000 zeros, in a zlib stream
    let idat = [&[0x78, 0x01, 0x01, 0xe8, 0x03, 0x17, 0xfc][..], &[0u8; 1000]].concat();
    let png =
        [&b"\x89PNG\r\n\x1a\n"[..], &png_chunk(b"IHDR", &ihdr), &png_chunk(b"IDAT", &idat), &png_chunk(b"IEND", &[])];
    std::fs::write(d.join("bomb.png"), png.concat()).unwrap();
    std::fs::write(d.join("bomb.pgm"), [&b"P5\n16000 16000\n65535\n"[..], &[0u8; 100]].concat()).unwrap();
    std::fs::write(d.join("bomb.tif"), tiff_claiming(16000, 1, 16000 * 16000 * 4)).unwrap();
    std::fs::write(d.join("bombz.tif"), tiff_claiming(16000, 8, 100)).unwrap();
    let header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': (16000, 16000), }}{:50}\n", "");
    let npy = [&b"\x93NUMPY\x01\x00"[..], &(header.len() as u16).to_le_bytes(), header.as_bytes(), &[0u8; 100]];
    std::fs::write(d.join("bomb.npy"), npy.concat()).unwrap();
    // an OpenEXR file of 16 x 16 whose windows say 16000 x 16000
    ok(&["generate", "--size", "16", "-o", "small.exr"], d);
    let mut exr = std::fs::read(d.join("small.exr")).unwrap();
    for name in [&b"dataWindow\0box2i\0"[..], b"displayWindow\0box2i\0"] {
        let at = exr.windows(name.len()).position(|w| w == name).unwrap() + name.len() + 4;
        exr[at + 8..at + 16].copy_from_slice(&[15999i32.to_le_bytes(), 15999i32.to_le_bytes()].concat());
    }
    std::fs::write(d.join("bomb.exr"), exr).unwrap();
    std::fs::remove_file(d.join("small.exr")).unwrap();
    // a mesh past the readers' bound (sparse), and one to read under a small --max-memory
    std::fs::File::create(d.join("huge.obj")).unwrap().set_len(5 << 30).unwrap();
    std::fs::File::create(d.join("ten.obj")).unwrap().set_len(10 << 20).unwrap();
    // a binary STL whose count says 1000 triangles, holding 10
    let lie = [&[0u8; 80][..], &1000u32.to_le_bytes(), &[0u8; 500]].concat();
    std::fs::write(d.join("lie.stl"), lie).unwrap();
    // sample types erode does not read: the message in words, not the decoder's types
    let mut signed64 = tiff_claiming(2, 1, 32);
    let at = signed64.len() - 4 - 12 * 10;
    for entry in signed64[at..].chunks_mut(12) {
        match u16::from_le_bytes([entry[0], entry[1]]) {
            258 => entry[8..12].copy_from_slice(&64u32.to_le_bytes()),
            339 => entry[8..12].copy_from_slice(&5u32.to_le_bytes()),
            _ => {}
        }
    }
    std::fs::write(d.join("format5.tif"), signed64).unwrap();
    tiff_with(d, "rotated.tif", |img| {
        let m = [1.0, 0.5, 0.0, 0.0, 0.5, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        img.encoder().write_tag(tiff::tags::Tag::ModelTransformationTag, &m[..]).unwrap();
    });
}

/// CRC-32 (ISO 3309, as PNG's chunks carry it).
fn crc32(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in bytes {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 == 1 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
        }
    }
    !c
}

/// A little-endian float TIFF of `size` x `size` cells in one strip of `strip_bytes` (as its
/// header says), compressed by `compression` (1 none, 8 deflate), holding 100 zero bytes.
fn tiff_claiming(size: u32, compression: u16, strip_bytes: u32) -> Vec<u8> {
    let mut entries: Vec<(u16, u16, u32)> = vec![
        (256, 4, size),
        (257, 4, size),
        (258, 3, 32),
        (259, 3, u32::from(compression)),
        (262, 3, 1),
        (273, 4, 8),
        (277, 3, 1),
        (278, 4, size),
        (279, 4, strip_bytes),
        (339, 3, 3),
    ];
    entries.sort();
    let mut out = [&b"II*\0"[..], &108u32.to_le_bytes(), &[0u8; 100]].concat();
    out.extend((entries.len() as u16).to_le_bytes());
    for (tag, kind, value) in entries {
        out.extend(tag.to_le_bytes());
        out.extend(kind.to_le_bytes());
        out.extend(1u32.to_le_bytes());
        // a SHORT sits in the first two bytes of the value field
        out.extend(value.to_le_bytes());
    }
    out.extend(0u32.to_le_bytes());
    out
}

/// OBJ text of 10 m cubes at `corners`, their faces wound outwards (or inwards).
fn cubes(corners: &[[f64; 3]], inward: bool) -> String {
    const FACES: [[usize; 3]; 12] = [
        [0, 1, 3],
        [0, 3, 2],
        [4, 6, 7],
        [4, 7, 5],
        [0, 4, 5],
        [0, 5, 1],
        [2, 3, 7],
        [2, 7, 6],
        [0, 2, 6],
        [0, 6, 4],
        [1, 5, 7],
        [1, 7, 3],
    ];
    let mut text = String::new();
    for c in corners {
        for k in 0..8 {
            let (dx, dy, dz) = ((k >> 2) & 1, (k >> 1) & 1, k & 1);
            text += &format!("v {} {} {}\n", c[0] + 10.0 * dx as f64, c[1] + 10.0 * dy as f64, c[2] + 10.0 * dz as f64);
        }
    }
    for (n, _) in corners.iter().enumerate() {
        for [a, b, c] in FACES {
            let (b, c) = if inward { (c, b) } else { (b, c) };
            text += &format!("f {} {} {}\n", 8 * n + a + 1, 8 * n + b + 1, 8 * n + c + 1);
        }
    }
    text
}

type Image<'a> = tiff::encoder::ImageEncoder<
    'a,
    &'a mut std::fs::File,
    tiff::encoder::colortype::Gray32Float,
    tiff::encoder::TiffKindStandard,
>;

/// A 4 x 4 float TIFF with tags set by `tags`.
fn tiff_with(d: &Path, name: &str, tags: impl FnOnce(&mut Image<'_>)) {
    let mut file = std::fs::File::create(d.join(name)).unwrap();
    let mut enc = tiff::encoder::TiffEncoder::new(&mut file).unwrap();
    let mut img = enc.new_image::<tiff::encoder::colortype::Gray32Float>(4, 4).unwrap();
    tags(&mut img);
    img.write_data(&[1.0f32; 16]).unwrap();
}

/// (arguments, what the one line must name).
const CASES: &[(&str, &str)] = &[
    ("simulate sph lie.stl -o o --iterations 1", "a binary STL of 1000 triangles (its count) is 50084 bytes"),
    // header bombs and files that are no files, refused before reading
    ("info pipe.tif", "not a regular file"),
    ("info huge.r32", "--max-cells"),
    ("simulate sph bomb.ply -o o --iterations 1", "the header's elements need"),
    ("info bomb.png", "bomb.png"),
    ("info bomb.pgm", "truncated"),
    ("info bomb.tif", "claim more bytes than its"),
    ("info bombz.tif", "bombz.tif"),
    ("info bomb.npy", "truncated"),
    ("info bomb.exr", "bomb.exr"),
    ("info format5.tif", "samples of SampleFormat 5 (erode reads one band"),
    ("simulate grid bomb.pgm -o o", "truncated"),
    ("simulate sph huge.obj -o o", "more than a mesh"),
    ("simulate sph ten.obj -o o --max-memory 100M", "--max-memory"),
    // SPH estimates its memory like the other models
    ("simulate sph --scene tank --particles 200000 --max-memory 100M -o o", "--max-memory"),
    ("simulate sph --scene tank --particles 5000000 --max-memory 1G -o o", "5000000 particles"),
    // rates past any landscape's, which made runs go non-finite
    ("simulate grid good.tif -o o --set rain_rate=1e308", "rain_rate"),
    // tiles smaller than a run takes, or narrower than their overlap; tiles on the GPU
    ("simulate grid good.tif -o o --tiles 8", "a tile of 8 cells"),
    ("simulate grid other.tif -o o --tiles 16 --overlap 20", "wider than the tiles' cores"),
    ("simulate grid good.tif -o o --tiles 16 --backend gpu", "--tiles runs on the CPU"),
    ("simulate grid good.tif -o o --overlap 4", "--tiles"),
    ("simulate grid good.tif -o o --tiles 16 --duration 1h", "--duration"),
    ("simulate grid good.tif -o o --tiles 16 --preset classic", "tiles need border = \"open\""),
    ("simulate stream-power good.tif -o o --set uplift=1e300", "uplift"),
    ("simulate stream-power good.tif -o o --set erodibility=1e300", "erodibility"),
    // bounds past which a run went non-finite or a derived value overflowed, in short numbers
    ("simulate grid good.tif -o o --set friction=1e30", "`friction` = 1e30 is out of range"),
    ("simulate grid good.tif -o o --set talus_scale=-1e3", "`talus_scale` = -1000"),
    ("simulate grid good.tif -o o --set repose_slope=0", "`repose_slope` = 0"),
    ("simulate grid good.tif -o o --set soil_depth=-1", "`soil_depth` = -1"),
    ("simulate grid good.tif -o o --set sediment_layer=2", "sediment_layer"),
    ("simulate sph --scene tank --set sound_speed=1e300 -o o", "`sound_speed` = 1e300"),
    ("simulate sph --scene tank --set kinematic_viscosity=1e300 -o o", "kinematic_viscosity"),
    ("generate --relief 9e299 -o x.tif", "`relief` = 9e299 is out of range"),
    ("generate --base -1e300 -o x.tif", "base"),
    ("simulate stream-power good.tif -o o --seed 3", "takes no seed"),
    // stream power: a step longer than the run, in short numbers
    ("simulate stream-power good.tif -o o --years 2e6 --dt-years 1e308", "dt_years 1e308"),
    // generate
    ("generate --relief -5 -o x.tif", "relief"),
    ("generate --persistence 2 -o x.tif", "persistence"),
    ("generate --octaves 0 -o x.tif", "octaves"),
    // a negative number is a value of its option, not an unknown argument
    ("generate --seed -1 -o x.tif", "invalid value '-1' for '--seed"),
    // numbers of hundreds of digits are not echoed whole
    ("generate --size 999999999999999999999999999999999999999999999999999999999999 -o x.tif", "999999… (60 digits)"),
    ("simulate grid good.tif -o o --set gravity=999999999999999999999999999999999999999999", "999999… (42 digits)"),
    ("generate -o x.bmp", "x.bmp"),
    ("generate --size 0 -o x.tif", "0"),
    ("generate --size 100000 -o x.tif", "100000 x 100000"),
    ("generate --size 64 --max-memory 1K -o x.tif", "--max-memory"),
    ("generate --cell-size 0 -o x.tif", "--cell-size"),
    ("generate --cell-size 1e300 -o x.tif", "--cell-size"),
    ("generate -o nofolder/x.tif", "nofolder"),
    // info
    ("info tinycells.tif", "1e-30"),
    ("info nanscale.tif", "pixel scale NaN"),
    ("info tinycells.pgm", "--cell-size"),
    ("info inverted.pgm", "does not increase"),
    ("simulate grid tinycells.tif -o o", "--cell-size"),
    ("simulate stream-power inverted.pgm -o o", "--min-height"),
    ("info garbage.png", "garbage.png"),
    ("info missing.tif", "missing.tif"),
    ("info empty.tif", "empty.tif"),
    ("info good.tif --min-height 3", "--max-height"),
    ("info badnodata.tif", "GDAL_NODATA"),
    ("info rotated.tif", "ModelTransformationTag"),
    ("info nan.r32", "nan.r32"),
    ("info row.r32", "--raw-size"),
    // convert
    ("convert garbage.png -o out.tif", "garbage.png"),
    ("convert good.tif -o out.xyz", "out.xyz"),
    ("convert good.tif -o plain/out.tif", "plain/out.tif"),
    ("convert good.tif -o good.tif", "input file"),
    ("convert good.tif --cell-size -1 -o y.tif", "--cell-size"),
    ("convert good.png --min-height 5 --max-height 1 -o y.tif", "--max-height"),
    // render
    ("render good.tif -o shot.jpg", "shot.jpg"),
    ("render good.png -o good.png", "input file"),
    ("render good.tif --z-factor 0 -o r.png", "--z-factor"),
    // resample
    ("resample good.tif -o r.tif", "--size"),
    ("resample good.tif --factor 0 -o r.tif", "--factor"),
    ("resample good.tif --factor nan -o r.tif", "--factor"),
    ("resample good.tif --factor 1e-9 -o r.tif", "--factor"),
    ("resample good.tif --size 0 -o r.tif", "--size"),
    ("resample good.tif --size 8x -o r.tif", "--size"),
    ("resample good.tif --size 100000 -o r.tif", "--max-cells"),
    ("resample good.tif --size 4096 --max-memory 100M -o r.tif", "--max-memory"),
    ("resample good.tif --resolution 0 -o r.tif", "--resolution"),
    ("resample good.tif --resolution 1e6 -o r.tif", "--resolution"),
    ("resample good.tif --size 8 --factor 2 -o r.tif", "--factor"),
    ("resample good.tif --size 8 --filter sinc -o r.tif", "sinc"),
    ("resample good.tif --size 8 -o good.tif", "input file"),
    // crop
    ("crop good.tif -o c.tif", "--cells"),
    ("crop good.tif --cells 10,10,8,8 -o c.tif", "16 x 16"),
    ("crop good.tif --cells 0,0,0,4 -o c.tif", "empty"),
    ("crop good.tif --cells 1,2,3 -o c.tif", "--cells"),
    ("crop good.tif --cells -1,0,4,4 -o c.tif", "--cells"),
    ("crop good.tif --cells 0.5,0,4,4 -o c.tif", "--cells"),
    ("crop good.tif --projwin 20,0,30,-10 -o c.tif", "outside"),
    ("crop good.tif --projwin 5,-5,2,-8 -o c.tif", "no whole cell"),
    ("crop good.tif --projwin 0,0,nan,-4 -o c.tif", "--projwin"),
    ("crop good.png --projwin 0,0,4,-4 -o c.tif", "georeference"),
    ("crop good.tif --cells 0,0,4,4 -o good.tif", "input file"),
    // rescale
    ("rescale good.tif -o s.tif", "--relief"),
    ("rescale good.tif --relief 0 -o s.tif", "relief"),
    ("rescale good.tif --relief nan -o s.tif", "relief"),
    ("rescale good.tif --factor -2 -o s.tif", "factor"),
    ("rescale good.tif --factor 1e300 -o s.tif", "1e6"),
    ("rescale good.tif --base 1e300 -o s.tif", "base"),
    ("rescale zero.tif --relief 10 -o s.tif", "flat"),
    ("rescale good.tif --relief 10 --factor 2 -o s.tif", "--factor"),
    // amplify
    ("amplify -o a --levels 9", "--levels"),
    ("amplify -o a --size 100", "--size"),
    ("amplify -o a --size 16 --levels 3", "--size"),
    ("amplify -o a --fine-years -1", "fine_years"),
    ("amplify -o a --time-ratio 0", "time_ratio"),
    ("amplify -o a --roughness 2", "roughness"),
    ("amplify -o a --set flow=dinf", "flow"),
    ("amplify -o a --resolution 0", "--resolution"),
    ("amplify -o a --size 65536 --levels 1", "--max-cells"),
    ("amplify -o a --size 4096 --max-memory 100M", "--max-memory"),
    ("amplify garbage.png -o a", "garbage.png"),
    ("amplify -o plain", "plain"),
    // analyze
    ("analyze garbage.png", "garbage.png"),
    ("analyze good.tif --max-memory 1M", "--max-memory"),
    // simulate grid
    ("simulate grid -o o", "needs an input heightmap"),
    ("simulate grid missing.tif -o o", "missing.tif"),
    ("simulate grid good.tif -o o --set nosuch=1", "nosuch"),
    ("simulate grid good.tif -o o --set gravity=-1", "gravity"),
    ("simulate grid good.tif -o o --set dt=0.1 --set gravity=1e30", "dt"),
    ("simulate grid good.tif -o o --set gravity=1e30 --duration 1h", "--duration"),
    ("simulate grid good.tif -o o --cell-size 1e-300", "--cell-size"),
    ("simulate grid good.tif -o o --cell-size 1e300", "--cell-size"),
    ("simulate grid good.tif -o o --set rain_mode=\"buckets\" --set bucket_count=1000000000", "bucket_count"),
    ("simulate grid good.tif -o o --threads 100000", "--threads"),
    ("simulate grid good.tif -o o --threads 0", "--threads"),
    ("simulate grid good.tif -o o --format xyz", "--format"),
    ("simulate grid good.tif -o o --preset nosuch", "nosuch"),
    ("simulate grid good.tif -o o --duration abc", "--duration"),
    ("simulate grid good.tif -o o --hardness-map other.tif", "hardness"),
    ("simulate grid good.tif -o o --hardness-map five.tif", "five.tif"),
    ("simulate grid good.tif -o o --rain-map negative.tif --set rain_mode=\"map\"", "negative.tif"),
    ("simulate grid good.tif -o o --rain-map negative.tif", "negative.tif"),
    ("simulate grid good.tif -o o --rain-map zero.tif --set rain_mode=\"off\"", "--rain-map"),
    ("simulate grid good.tif -o o --rain-map zero.tif --preset gentle", "--rain-map"),
    ("simulate grid good.tif -o o --rain-map zero.tif --set rain_mode=\"buckets\"", "--rain-map"),
    ("simulate grid good.tif -o o --sediment-depth-map negative.tif", "negative.tif: the sediment depth map holds"),
    (
        "simulate grid good.tif -o o --sediment-depth-map good.tif --set sediment_layer=false",
        "good.tif: a sediment depth map needs sediment_layer = true",
    ),
    ("simulate grid good.tif -o o --max-memory 1M", "--max-memory"),
    ("simulate grid good.tif -o o --resume", "checkpoint"),
    ("simulate grid good.tif -o o --params missing.toml", "missing.toml"),
    ("simulate grid good.tif -o o --params bad.toml", "bad.toml"),
    ("simulate grid good.tif -o o --scene lake", "--scene"),
    ("simulate grid good.tif -o plain", "plain"),
    // simulate droplet
    ("simulate droplet good.tif -o o --droplets-per-cell -1", "--droplets-per-cell"),
    ("simulate droplet good.tif -o o --droplets-per-cell 1e20", "droplets"),
    ("simulate droplet good.tif -o o --set radius=1000", "radius"),
    ("simulate droplet good.tif -o o --set max_distance=1e9", "max_distance"),
    ("simulate droplet good.tif -o o --set evaporation_length=0", "evaporation_length"),
    ("simulate droplet good.tif -o o --preset nosuch", "nosuch"),
    ("simulate droplet good.tif -o o --rain-map zero.tif", "zero.tif"),
    ("simulate droplet good.tif -o o --rain-map negative.tif", "negative.tif"),
    ("simulate droplet good.tif -o o --hardness-map five.tif", "five.tif"),
    ("simulate droplet good.tif -o o --max-memory 1M", "--max-memory"),
    ("simulate droplet good.tif -o o --threads 100000", "--threads"),
    // simulate sph
    ("simulate sph row.r32 --raw-size 8x1 -o o", "2 x 2"),
    ("simulate sph row.r32 --raw-size 1x8 -o o", "2 x 2"),
    ("simulate sph open.obj -o o", "not closed"),
    ("simulate sph inward.obj -o o", "inside out"),
    ("simulate sph overlap.obj -o o", "intersect"),
    ("simulate sph --scene moon -o o", "--scene moon"),
    ("simulate sph --scene tank --set cfl=3 -o o", "cfl"),
    ("simulate sph --scene tank --threads 100000 -o o", "--threads"),
    // params
    ("params grid --preset nosuch", "nosuch"),
    ("params droplet --preset nosuch", "nosuch"),
];

/// Splits a case's command line at spaces (no case needs a space inside an argument).
fn args(line: &str) -> Vec<&str> {
    line.split(' ').collect()
}

/// GNU time, if installed.
const GNU_TIME: &str = "/usr/bin/time";

/// Runs `erode args` in `dir` under GNU time: its output and its peak resident size in bytes.
fn erode_measured(args: &[&str], dir: &Path, report: &Path) -> (std::process::Output, u64) {
    let out = Command::new(GNU_TIME)
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(report)
        .arg(env!("CARGO_BIN_EXE_erode"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(report).unwrap();
    // the last line is the figure, in kilobytes (a line before it may say the exit status)
    let kb: u64 = text.lines().last().and_then(|l| l.trim().parse().ok()).unwrap_or_else(|| panic!("{text}"));
    (out, kb * 1024)
}

#[test]
fn every_bad_input_exits_2_with_one_line_and_leaves_nothing() {
    assert!(CASES.len() >= 60, "{} cases", CASES.len());
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    fixtures(d);
    let before = files_in(d);
    let timing = tempfile::tempdir().unwrap();
    let report = timing.path().join("time.txt");
    let measure = Path::new(GNU_TIME).exists();
    if !measure {
        eprintln!("not checking peak memory: {GNU_TIME} not found (apt-get install time)");
    }
    let mut failures = Vec::new();
    for (line, needle) in CASES {
        let started = Instant::now();
        let (out, peak) = if measure { erode_measured(&args(line), d, &report) } else { (erode(&args(line), d), 0) };
        let took = started.elapsed();
        let err = String::from_utf8_lossy(&out.stderr).trim_end().to_string();
        let problem = if out.status.code() != Some(2) {
            Some(format!("exit status {:?}", out.status.code()))
        } else if !err.contains(needle) {
            Some(format!("does not name `{needle}`"))
        } else if err.lines().count() != 1 {
            Some("more than one line".to_string())
        } else if files_in(d) != before {
            Some(format!("left {:?}", files_in(d).difference(&before).collect::<Vec<_>>()))
        } else if took > Duration::from_secs(2) {
            Some(format!("took {took:?}"))
        } else if peak >= 200 << 20 {
            Some(format!("peaked at {} MB", peak >> 20))
        } else {
            None
        };
        if let Some(p) = problem {
            failures.push(format!("erode {line}: {p}: {err}"));
            // clean up for the next case
            for extra in files_in(d).difference(&before) {
                let p = d.join(extra);
                let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), CASES.len(), failures.join("\n"));
}

#[test]
fn resume_refuses_another_input_a_shorter_run_and_names_an_older_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "24", "--seed", "1", "-o", "a.tif"], d);
    ok(&["generate", "--size", "24", "--seed", "2", "-o", "b.tif"], d);
    for model in ["grid", "droplet"] {
        let (count, more, fewer) =
            if model == "grid" { ("--iterations", "30", "5") } else { ("--droplets", "3000", "10") };
        let every = if model == "grid" { "10" } else { "1000" };
        let out = format!("{model}-run");
        let run = |input: &str, n: &str, resume: bool| {
            let mut args = vec!["simulate", model, input, "-o", &out, count, n, "--checkpoint-every", every, "-q"];
            if resume {
                args.push("--resume");
            }
            if model == "droplet" {
                // checkpoints fall on whole batches
                args.extend(["--set", "batch_size=500"]);
            }
            args.iter().map(|s| s.to_string()).collect::<Vec<_>>()
        };
        let strs = |v: &[String]| v.iter().map(String::as_str).collect::<Vec<_>>().join(" ");
        ok(&args(&strs(&run("a.tif", if model == "grid" { "20" } else { "2000" }, false))), d);
        // another map of the same size
        common::refused(&args(&strs(&run("b.tif", more, true))), d, "b.tif");
        // fewer than the checkpoint holds
        common::refused(&args(&strs(&run("a.tif", fewer, true))), d, "past");
        // the same map said to have other cells
        let mut resized = run("a.tif", more, true);
        resized.extend(["--cell-size".into(), "2".into()]);
        common::refused(&args(&strs(&resized)), d, "the run has cells of 1 x 1 m, the input now 2 x 2 m");
        // a corrupt newest checkpoint: the error names the older one
        let ckpts: Vec<_> = files_in(&d.join(&out).join("checkpoints"))
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "ckpt"))
            .collect();
        assert!(ckpts.len() >= 2, "{ckpts:?}");
        std::fs::write(ckpts.last().unwrap(), b"garbage").unwrap();
        let err = common::refused(&args(&strs(&run("a.tif", more, true))), d, "older checkpoint");
        assert!(err.contains(&ckpts[ckpts.len() - 2].file_name().unwrap().to_string_lossy().to_string()), "{err}");
        // and without it the run resumes
        std::fs::remove_file(ckpts.last().unwrap()).unwrap();
        ok(&args(&strs(&run("a.tif", more, true))), d);
    }
}
