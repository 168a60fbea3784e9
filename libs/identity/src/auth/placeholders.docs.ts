/** The OpenAPI text of the placeholder routes (placeholders.controller.ts), kept out of the controller. */

export const PASSKEY_ID = { name: 'id', type: String };
export const DEVICE_ID = { name: 'deviceId', type: String };
