import { Module } from '@nestjs/common';
import { AuditModule } from '#governance';
import { FriaController } from './fria.controller.js';
import { FriaRepository } from './fria.repository.js';
import { FriaService } from './fria.service.js';

/** Fundamental-rights impact assessments (EU AI Act article 27): the resource, its states and its anchored hash. */
@Module({
  imports: [AuditModule],
  controllers: [FriaController],
  providers: [FriaRepository, FriaService],
  exports: [FriaRepository],
})
export class FriaModule {}
