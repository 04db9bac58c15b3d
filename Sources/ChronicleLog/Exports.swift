// The payload codec's CBOR vocabulary (CBORCodable, CBORWriter, CBORReader, CBORValue, CBOREncoder,
// CBORDecoder, …) is part of the log's API: `import ChronicleLog` (and so `import Chronicle`) brings it along.
@_exported import ChronicleCBOR
