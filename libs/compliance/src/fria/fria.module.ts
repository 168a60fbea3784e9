import { Module } from '@nestjs/common';
import { FriaLookup } from './fria-lookup.js';

/** Fundamental-rights impact assessments (EU AI Act article 27): the resource, its states and its anchored hash. */
@Module({
  providers: [FriaLookup],
  exports: [FriaLookup],
})
export class FriaModule {}
