//! Every format gives back what it was given: floats bit for bit, integers within one quantum;
//! cell size, nodata and georeference where the format can carry them.

mod common;

use common::{map_with_hole, noise_map};
use erode_io::{Format, GeoRef, ReadOptions, WriteOptions, decode, encode};

const ALL: [Format; 7] = [Format::Png, Format::Tiff, Format::Exr, Format::Pgm, Format::Npy, Format::R16, Format::R32];

fn read_options(format: Format, w: usize, h: usize) -> ReadOptions {
    let raw = matches!(format, Format::R16 | Format::R32);
    ReadOptions { raw_size: raw.then_some((w, h)), ..Default::default() }
}

#[test]
fn every_format_round_trips() {
    let map = noise_map();
    let (w, h) = (map.heights.width(), map.heights.height());
    let stats = map.stats();
    let quantum = f64::from(stats.max - stats.min) / 65535.0;
    for format in ALL {
        let bytes = encode(&map, format, &WriteOptions::default()).unwrap();
        let mut opts = read_options(format, w, h);
        if format == Format::R16 {
            // RAW carries no range: say it
            opts.mapping = Some(erode_io::IntMapping::Range { min: f64::from(stats.min), max: f64::from(stats.max) });
        }
        let back = decode(&bytes, format, &opts).unwrap().map;
        assert_eq!((back.heights.width(), back.heights.height()), (w, h), "{format:?}");
        if format.is_integer() {
            let worst = map
                .heights
                .as_slice()
                .iter()
                .zip(back.heights.as_slice())
                .map(|(a, b)| f64::from((a - b).abs()))
                .fold(0.0, f64::max);
            assert!(worst <= quantum * 0.5 + 1e-5, "{format:?}: off by {worst}, quantum {quantum}");
        } else {
            let same =
                map.heights.as_slice().iter().zip(back.heights.as_slice()).all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "{format:?} is not bit-exact");
        }
        if matches!(format, Format::Tiff | Format::Png | Format::Pgm) {
            assert_eq!(back.heights.cell_size(), map.heights.cell_size(), "{format:?} lost the cell size");
        }
    }
}

#[test]
fn nodata_survives_every_format() {
    let map = map_with_hole();
    let (w, h) = (map.heights.width(), map.heights.height());
    for format in ALL {
        if format == Format::R16 {
            continue; // no way to declare nodata in a headerless u16 file
        }
        let bytes = encode(&map, format, &WriteOptions::default()).unwrap();
        let mut opts = read_options(format, w, h);
        if matches!(format, Format::Exr | Format::Npy | Format::R32) {
            // these carry nodata as NaN, which must be declared on reading
            assert!(decode(&bytes, format, &opts).is_err(), "{format:?} accepted undeclared NaN");
            opts.nodata = Some(f64::NAN);
        }
        let back = decode(&bytes, format, &opts).unwrap().map;
        assert_eq!(back.nodata_mask(), map.nodata_mask(), "{format:?}");
    }
}

#[test]
fn float_formats_without_a_nodata_tag_write_nan_whatever_the_input_declared() {
    // an int16 DEM's -32768 must not become a -32768 m cliff in formats that cannot say so
    let map = map_with_hole();
    let (w, h) = (map.heights.width(), map.heights.height());
    let written = WriteOptions { nodata_value: Some(-32768.0), ..Default::default() };
    for format in [Format::Exr, Format::Npy, Format::R32] {
        let bytes = encode(&map, format, &written).unwrap();
        let opts = ReadOptions { nodata: Some(f64::NAN), ..read_options(format, w, h) };
        let back = decode(&bytes, format, &opts).unwrap();
        assert_eq!(back.map.nodata_mask(), map.nodata_mask(), "{format:?}");
    }
}

#[test]
fn tiff_nodata_is_declared_as_the_float32_the_cells_hold() {
    let map = map_with_hole();
    for value in [-32768.0, -3.402823e38, f64::from(f32::MIN), -9999.5] {
        let bytes =
            encode(&map, Format::Tiff, &WriteOptions { nodata_value: Some(value), ..Default::default() }).unwrap();
        let back = decode(&bytes, Format::Tiff, &ReadOptions::default()).unwrap();
        let declared = back.info.nodata_value.unwrap();
        assert_eq!(declared, f64::from(declared as f32), "{value}: {declared} is not a float32");
        assert_eq!(declared as f32, value as f32);
        assert_eq!(back.map.nodata_mask(), map.nodata_mask(), "{value}");
    }
}

#[test]
fn tiff_with_a_nodata_text_that_is_no_number_is_refused_unless_given() {
    use tiff::encoder::{TiffEncoder, colortype::Gray32Float};
    let mut out = std::io::Cursor::new(Vec::new());
    {
        let mut enc = TiffEncoder::new(&mut out).unwrap();
        let mut img = enc.new_image::<Gray32Float>(2, 2).unwrap();
        img.encoder().write_tag(tiff::tags::Tag::GdalNodata, "abc").unwrap();
        img.write_data(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    }
    let bytes = out.into_inner();
    let err = decode(&bytes, Format::Tiff, &ReadOptions::default()).unwrap_err().to_string();
    assert!(err.contains("GDAL_NODATA") && err.contains("abc"), "{err}");
    let given = ReadOptions { nodata: Some(-1.0), ..Default::default() };
    assert!(decode(&bytes, Format::Tiff, &given).is_ok());
}

#[test]
fn tiff_carries_georeference_and_nodata_value() {
    let map = map_with_hole();
    let geo = GeoRef {
        pixel_scale: Some(vec![0.000_833_333_333_333_3, 0.000_833_333_333_333_3, 0.0]),
        tiepoint: Some(vec![0.0, 0.0, 0.0, 7.5, 46.25, 0.0]),
        transformation: None,
        geokeys: Some(vec![1, 1, 0, 3, 1024, 0, 1, 2, 1025, 0, 1, 1, 2048, 0, 1, 4326]),
        geo_doubles: Some(vec![298.257_223_563, 6_378_137.0]),
        geo_ascii: Some("WGS 84|".into()),
    };
    let opts = WriteOptions { georef: Some(geo.clone()), nodata_value: Some(-32768.0), ..Default::default() };
    let bytes = encode(&map, Format::Tiff, &opts).unwrap();
    let back = decode(&bytes, Format::Tiff, &ReadOptions::default()).unwrap();
    assert_eq!(back.info.georef.as_ref(), Some(&geo));
    assert_eq!(back.info.nodata_value, Some(-32768.0));
    assert_eq!(back.map.nodata_mask(), map.nodata_mask());
    // 3 arc-seconds at 46 degrees north: about 64 m east-west, 93 m north-south
    let c = back.map.heights.cell_size();
    assert!((c.x - 64.5).abs() < 0.5 && (c.y - 92.6).abs() < 0.5, "{c:?}");
}

/// A float32 TIFF georeferenced by a ModelTransformationTag, as some DEMs are written.
fn transformed_tiff(matrix: &[f64]) -> Vec<u8> {
    use tiff::encoder::{TiffEncoder, colortype::Gray32Float};
    use tiff::tags::Tag;
    let mut out = std::io::Cursor::new(Vec::new());
    {
        let mut enc = TiffEncoder::new(&mut out).unwrap();
        let mut img = enc.new_image::<Gray32Float>(4, 3).unwrap();
        img.encoder().write_tag(Tag::ModelTransformationTag, matrix).unwrap();
        img.encoder()
            .write_tag(Tag::GeoKeyDirectoryTag, &[1u16, 1, 0, 2, 1024, 0, 1, 1, 3072, 0, 1, 32633][..])
            .unwrap();
        img.write_data(&[100.0f32; 12]).unwrap();
    }
    out.into_inner()
}

#[test]
fn tiff_transformation_gives_cell_size_and_is_written_back() {
    // 81 m columns, 116 m rows, top-left corner at (500000, 4000000)
    let m = [81.0, 0.0, 0.0, 500000.0, 0.0, -116.0, 0.0, 4000000.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
    let back = decode(&transformed_tiff(&m), Format::Tiff, &ReadOptions::default()).unwrap();
    let c = back.map.heights.cell_size();
    assert_eq!((c.x, c.y), (81.0, 116.0));
    let geo = back.info.georef.clone().unwrap();
    assert_eq!(geo.origin(), Some((500000.0, 4000000.0)));
    let opts = WriteOptions { georef: Some(geo.clone()), ..Default::default() };
    let again =
        decode(&encode(&back.map, Format::Tiff, &opts).unwrap(), Format::Tiff, &ReadOptions::default()).unwrap();
    assert_eq!(again.info.georef, Some(geo));
    // a rotated raster is refused, naming the tag
    let mut rotated = m;
    rotated[1] = 10.0;
    let err = decode(&transformed_tiff(&rotated), Format::Tiff, &ReadOptions::default()).unwrap_err().to_string();
    assert!(err.contains("ModelTransformationTag") && err.contains("rotates"), "{err}");
}

/// An int16 DEM written the way GDAL writes SRTM tiles: LZW or deflate, GDAL_NODATA -32768.
fn int16_tiff(compression: tiff::encoder::Compression, values: &[i16], w: u32, h: u32) -> Vec<u8> {
    use tiff::encoder::{TiffEncoder, colortype::GrayI16};
    use tiff::tags::Tag;
    let mut out = std::io::Cursor::new(Vec::new());
    {
        let mut enc = TiffEncoder::new(&mut out).unwrap().with_compression(compression);
        let mut img = enc.new_image::<GrayI16>(w, h).unwrap();
        img.rows_per_strip(3).unwrap();
        img.encoder().write_tag(Tag::GdalNodata, "-32768").unwrap();
        img.encoder().write_tag(Tag::ModelPixelScaleTag, &[1.0f64, 1.0, 0.0][..]).unwrap();
        img.encoder().write_tag(Tag::ModelTiepointTag, &[0.0f64, 0.0, 0.0, 500000.0, 4000000.0, 0.0][..]).unwrap();
        img.encoder()
            .write_tag(Tag::GeoKeyDirectoryTag, &[1u16, 1, 0, 2, 1024, 0, 1, 1, 3072, 0, 1, 32633][..])
            .unwrap();
        img.write_data(values).unwrap();
    }
    out.into_inner()
}

#[test]
fn int16_tiffs_with_every_compression_read_as_metres() {
    let (w, h) = (9u32, 7u32);
    let values: Vec<i16> = (0..w * h).map(|i| if i == 5 { -32768 } else { i as i16 * 3 - 50 }).collect();
    for compression in [
        tiff::encoder::Compression::Uncompressed,
        tiff::encoder::Compression::Lzw,
        tiff::encoder::Compression::Deflate(tiff::encoder::DeflateLevel::Fast),
        tiff::encoder::Compression::Packbits,
    ] {
        let bytes = int16_tiff(compression, &values, w, h);
        let back = decode(&bytes, Format::Tiff, &ReadOptions::default()).unwrap();
        assert_eq!(back.info.sample_type, "int16");
        assert_eq!(back.map.nodata_count(), 1);
        assert!(back.map.is_nodata(5));
        assert_eq!(back.map.heights.as_slice()[6], 6.0 * 3.0 - 50.0);
        assert_eq!(back.info.georef.as_ref().and_then(|g| g.epsg()), Some(32633));
    }
}

#[test]
fn image_formats_default_to_the_documented_range() {
    // a PNG not written by erode: full scale is DEFAULT_IMAGE_RANGE
    let mut bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut bytes, 2, 1);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(png::BitDepth::Eight);
        enc.write_header().unwrap().write_image_data(&[0, 255]).unwrap();
    }
    let back = decode(&bytes, Format::Png, &ReadOptions::default()).unwrap().map;
    assert_eq!(
        back.heights.as_slice(),
        &[erode_io::DEFAULT_IMAGE_RANGE.0 as f32, erode_io::DEFAULT_IMAGE_RANGE.1 as f32]
    );
    let opts =
        ReadOptions { mapping: Some(erode_io::IntMapping::Range { min: -10.0, max: 500.0 }), ..Default::default() };
    let back = decode(&bytes, Format::Png, &opts).unwrap().map;
    assert_eq!(back.heights.as_slice(), &[-10.0, 500.0]);
}

/// Grey saved as colour (RGB or RGBA, 8 or 16 bits, the three channels equal) reads as the grey
/// image does, its alpha 0 as nodata; one pixel of another colour is refused, with its place.
#[test]
fn png_rgb_of_equal_channels_reads_as_grey() {
    let png = |color, depth, data: &[u8]| {
        let mut bytes = Vec::new();
        let mut enc = png::Encoder::new(&mut bytes, 3, 1);
        enc.set_color(color);
        enc.set_depth(depth);
        enc.write_header().unwrap().write_image_data(data).unwrap();
        bytes
    };
    use png::{BitDepth::*, ColorType::*};
    let grey = decode(&png(Grayscale, Eight, &[0, 128, 255]), Format::Png, &ReadOptions::default()).unwrap().map;
    let rgb = png(Rgb, Eight, &[0, 0, 0, 128, 128, 128, 255, 255, 255]);
    assert_eq!(decode(&rgb, Format::Png, &ReadOptions::default()).unwrap().map, grey);
    let rgba = png(Rgba, Sixteen, &[0, 0, 0, 0, 0, 0, 255, 255, 1, 0, 1, 0, 1, 0, 0, 0, 2, 2, 2, 2, 2, 2, 255, 255]);
    let back = decode(&rgba, Format::Png, &ReadOptions::default()).unwrap().map;
    assert_eq!(back.nodata_count(), 1);
    assert!(back.is_nodata(1));
    let odd = png(Rgb, Eight, &[0, 0, 0, 128, 128, 128, 255, 250, 255]);
    let e = decode(&odd, Format::Png, &ReadOptions::default()).unwrap_err().to_string();
    assert!(e.contains("channels differ") && e.contains("row 0, column 2"), "{e}");
}

/// A PNG with no height range of erode's says what it assumed (0 to 100 m), and nothing when the
/// range is given or written by erode.
#[test]
fn a_png_without_a_height_range_says_what_it_assumed() {
    let mut bytes = Vec::new();
    let mut enc = png::Encoder::new(&mut bytes, 3, 1);
    enc.set_color(png::ColorType::Grayscale);
    enc.write_header().unwrap().write_image_data(&[0, 128, 255]).unwrap();
    let plain = decode(&bytes, Format::Png, &ReadOptions::default()).unwrap();
    let note = plain.info.assumed.unwrap();
    assert!(note.contains("0 to 255 read as 0 to 100 m") && note.contains("--min-height"), "{note}");
    let given =
        ReadOptions { mapping: Some(erode_io::IntMapping::Range { min: 0.0, max: 10.0 }), ..Default::default() };
    assert_eq!(decode(&bytes, Format::Png, &given).unwrap().info.assumed, None);
    let ours = encode(&plain.map, Format::Png, &WriteOptions::default()).unwrap();
    assert_eq!(decode(&ours, Format::Png, &ReadOptions::default()).unwrap().info.assumed, None);
}

#[test]
fn npy_fortran_order_and_big_endian_are_transposed_and_swapped() {
    // 2 rows x 3 columns, values 10*row + col, stored column-major big-endian f8
    let dict = "{'descr': '>f8', 'fortran_order': True, 'shape': (2, 3), }";
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(dict.len() as u16 + 1).to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    bytes.push(b'\n');
    for col in 0..3 {
        for row in 0..2 {
            bytes.extend_from_slice(&f64::from(10 * row + col).to_be_bytes());
        }
    }
    let back = decode(&bytes, Format::Npy, &ReadOptions::default()).unwrap().map;
    assert_eq!(back.heights.as_slice(), &[0.0, 1.0, 2.0, 10.0, 11.0, 12.0]);
}

#[test]
fn real_dems_read_with_georeference() {
    if let Some(p) = common::testdata("lidar-dem.tif") {
        let l = erode_io::read(&p, &ReadOptions::default()).unwrap();
        assert_eq!((l.map.heights.width(), l.map.heights.height()), (400, 400));
        assert_eq!(l.info.sample_type, "float32");
        assert_eq!(l.info.georef.as_ref().and_then(|g| g.epsg()), Some(26915));
        assert_eq!(l.map.heights.cell_size(), erode::CellSize::square(1.0));
        let s = l.map.stats();
        assert!(s.min > 300.0 && s.max < 500.0, "{s:?}");
    }
    if let Some(p) = common::testdata("terra-elev.tif") {
        let l = erode_io::read(&p, &ReadOptions::default()).unwrap();
        assert_eq!((l.map.heights.width(), l.map.heights.height()), (95, 90));
        assert_eq!(l.info.sample_type, "int16");
        assert_eq!(l.info.nodata_value, Some(-32768.0));
        assert!(l.map.nodata_count() > 0);
        let s = l.map.stats();
        assert_eq!((s.min, s.max), (141.0, 547.0));
        // 30 arc-seconds at ~49.8 N on WGS 84
        let c = l.map.heights.cell_size();
        assert!((c.x - 599.7).abs() < 1.0 && (c.y - 926.9).abs() < 1.0, "{c:?}");
    }
}

/// A block of rows of a real DEM read alone (a rank's share of a map no rank holds whole) is
/// those rows of the whole map, nodata and cell size included: the tiled float32 lidar DEM
/// (tiles cut by the rows) and the LZW int16 terra DEM (strips).
#[test]
fn rows_of_real_dems_read_alone_are_the_whole_maps_rows() {
    for name in ["lidar-dem.tif", "terra-elev.tif"] {
        let Some(path) = common::testdata(name) else { continue };
        let options = erode_io::ReadOptions::default();
        let whole = erode_io::read(&path, &options).unwrap().map;
        let (w, h) = (whole.heights.width(), whole.heights.height());
        for rows in [0..h, 0..1, h / 3..2 * h / 3 + 1, h - 1..h] {
            let part = erode_io::rows::read_rows(&path, rows.clone(), &options).unwrap();
            let cells = rows.start * w..rows.end * w;
            let mask: Vec<bool> = whole.nodata_mask().map_or(vec![false; cells.len()], |m| m[cells.clone()].to_vec());
            assert_eq!(part.nodata, mask.iter().any(|&b| b).then(|| mask.clone()), "{name} {rows:?}");
            // the valid cells (a heightmap fills its nodata cells; a block keeps the file's value)
            let valid =
                |h: &[f32]| -> Vec<f32> { h.iter().zip(&mask).filter(|(_, n)| !**n).map(|(h, _)| *h).collect() };
            assert_eq!(valid(part.heights.as_slice()), valid(&whole.heights.as_slice()[cells]), "{name} {rows:?}");
            assert_eq!(part.heights.cell_size(), whole.heights.cell_size(), "{name}");
        }
    }
}
