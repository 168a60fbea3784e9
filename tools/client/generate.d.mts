/** The OpenAPI document at the repository's root. */
export declare const DOCUMENT_FILE: URL;
/** The generated layer of the typed client. */
export declare const OUTPUT_FILE: URL;
/** The TypeScript of an OpenAPI document (the parsed JSON), formatted as the committed file is. */
export declare function generateClientTypes(document: unknown): Promise<string>;
