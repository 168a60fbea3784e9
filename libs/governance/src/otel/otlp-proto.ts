import protobuf from 'protobufjs/light.js';

/**
 * Hand-written protobufjs descriptor for the subset of opentelemetry-proto (v1) that trace ingestion needs.
 * Field numbers follow opentelemetry/proto/{common,resource,trace,collector/trace}/v1/*.proto (and match the
 * field maps in @opentelemetry/otlp-transformer's serializer). Fields we do not read (links, flags,
 * dropped counts, entity refs) are left out: protobufjs skips unknown fields, which is the proto3 rule anyway.
 * Field names are lowerCamelCase so a decoded message has the same keys as OTLP/JSON, and one normaliser
 * serves both encodings. Enums (span kind, status code) are declared int32: same varint on the wire, and an
 * unknown future enum value then stays a number instead of failing.
 */
const descriptor = {
  nested: {
    otlp: {
      nested: {
        AnyValue: {
          oneofs: {
            value: {
              oneof: [
                'stringValue',
                'boolValue',
                'intValue',
                'doubleValue',
                'arrayValue',
                'kvlistValue',
                'bytesValue',
              ],
            },
          },
          fields: {
            stringValue: { type: 'string', id: 1 },
            boolValue: { type: 'bool', id: 2 },
            intValue: { type: 'int64', id: 3 },
            doubleValue: { type: 'double', id: 4 },
            arrayValue: { type: 'ArrayValue', id: 5 },
            kvlistValue: { type: 'KeyValueList', id: 6 },
            bytesValue: { type: 'bytes', id: 7 },
          },
        },
        ArrayValue: { fields: { values: { rule: 'repeated', type: 'AnyValue', id: 1 } } },
        KeyValueList: { fields: { values: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
        KeyValue: {
          fields: {
            key: { type: 'string', id: 1 },
            value: { type: 'AnyValue', id: 2 },
          },
        },
        InstrumentationScope: {
          fields: {
            name: { type: 'string', id: 1 },
            version: { type: 'string', id: 2 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 3 },
          },
        },
        Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
        Status: {
          fields: {
            message: { type: 'string', id: 2 },
            code: { type: 'int32', id: 3 },
          },
        },
        Event: {
          fields: {
            timeUnixNano: { type: 'fixed64', id: 1 },
            name: { type: 'string', id: 2 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 3 },
          },
        },
        Span: {
          fields: {
            traceId: { type: 'bytes', id: 1 },
            spanId: { type: 'bytes', id: 2 },
            traceState: { type: 'string', id: 3 },
            parentSpanId: { type: 'bytes', id: 4 },
            name: { type: 'string', id: 5 },
            kind: { type: 'int32', id: 6 },
            startTimeUnixNano: { type: 'fixed64', id: 7 },
            endTimeUnixNano: { type: 'fixed64', id: 8 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 9 },
            events: { rule: 'repeated', type: 'Event', id: 11 },
            status: { type: 'Status', id: 15 },
          },
        },
        ScopeSpans: {
          fields: {
            scope: { type: 'InstrumentationScope', id: 1 },
            spans: { rule: 'repeated', type: 'Span', id: 2 },
            schemaUrl: { type: 'string', id: 3 },
          },
        },
        ResourceSpans: {
          fields: {
            resource: { type: 'Resource', id: 1 },
            scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 },
            schemaUrl: { type: 'string', id: 3 },
          },
        },
        ExportTraceServiceRequest: {
          fields: { resourceSpans: { rule: 'repeated', type: 'ResourceSpans', id: 1 } },
        },
        ExportTracePartialSuccess: {
          fields: {
            rejectedSpans: { type: 'int64', id: 1 },
            errorMessage: { type: 'string', id: 2 },
          },
        },
        ExportTraceServiceResponse: {
          fields: { partialSuccess: { type: 'ExportTracePartialSuccess', id: 1 } },
        },
      },
    },
  },
};

const root = protobuf.Root.fromJSON(descriptor);

export const ExportTraceServiceRequestType = root.lookupType('otlp.ExportTraceServiceRequest');
export const ExportTraceServiceResponseType = root.lookupType('otlp.ExportTraceServiceResponse');

/**
 * Options for `Type.toObject`: 64-bit integers as decimal strings so nanosecond timestamps keep full
 * precision (they exceed 2^53); bytes stay Uint8Array so the normaliser can hex-encode ids; no defaults,
 * so an unset oneof member is distinguishable from a zero value.
 */
export const PROTO_TO_OBJECT_OPTIONS: protobuf.IConversionOptions = {
  longs: String,
  enums: Number,
  defaults: false,
  arrays: true,
};
