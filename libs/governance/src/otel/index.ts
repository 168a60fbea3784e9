export * from './otlp-trace.types.js';
export * from './otlp-decode.error.js';
export * from './otlp-decode.js';
export * from './gen-ai-extract.js';
export * from './otlp-response.js';
