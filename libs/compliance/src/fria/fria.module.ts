import { Module } from '@nestjs/common';

/** Fundamental-rights impact assessments (EU AI Act article 27): the resource, its states and its anchored hash. */
@Module({})
export class FriaModule {}
