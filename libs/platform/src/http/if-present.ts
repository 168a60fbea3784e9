import { ValidateIf } from 'class-validator';

/**
 * Validates an optional field of an update only when it is present. Unlike `@IsOptional()`, `null` is not
 * "absent": it goes through the field's type check and gets a 400, rather than reaching a NOT NULL column.
 */
export const IfPresent = (): PropertyDecorator =>
  ValidateIf((_object: object, value: unknown) => value !== undefined);
