import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { AppError, type ErrorDetail } from './app-error.js';

function flatten(errors: ValidationError[], parent = ''): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  for (const e of errors) {
    const field = parent ? `${parent}.${e.property}` : e.property;
    for (const message of Object.values(e.constraints ?? {})) out.push({ field, message });
    if (e.children?.length) out.push(...flatten(e.children, field));
  }
  return out;
}

/** Validates every body and query DTO; a failure is a 400 VALIDATION_ERROR with one detail per field. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => {
      const details = flatten(errors);
      return AppError.validation(
        details.length ? `Validation failed: ${details[0]!.message}` : 'Validation failed',
        details,
      );
    },
  });
}
