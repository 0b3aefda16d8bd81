package io.github.ucxffm.samples;

import io.github.ucxffm.UcxVersion;
import io.github.ucxffm.bindings.uct_component_attr;
import io.github.ucxffm.bindings.uct_md_resource_desc;
import io.github.ucxffm.bindings.uct_tl_resource_desc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Locale;

import static io.github.ucxffm.bindings.ucx_h.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * Prints the UCX version this JVM loaded, the releases ucx-ffm supports and what it does differently on this one,
 * and the transports UCX finds on this machine, as {@code ucx_info -v -d} would: the first thing to run on a new
 * machine.
 */
public final class Info {

    private Info() {
    }

    public static void main(String[] args) {
        try (Arena arena = Arena.ofConfined()) {
            UcxVersion loaded = UcxVersion.runtime();
            System.out.printf("UCX %s, Java %s%n", loaded, Runtime.version());
            System.out.printf("ucx-ffm supports UCX %s and later%s; bindings generated from UCX %s; whole suite run on "
                    + "UCX %s%n", UcxVersion.OLDEST_SUPPORTED, loaded.isSupported() ? "" : " (NOT this one)",
                    UcxVersion.BINDINGS_GENERATED_FROM, UcxVersion.TESTED);
            for (UcxVersion.Capability c : UcxVersion.Capability.values()) {
                System.out.printf("  %-40s %s (UCX %s and later)%n", c.name().toLowerCase(Locale.ROOT),
                        loaded.has(c) ? "used" : "not used", c.since());
            }
            System.out.printf("%-12s %-12s %s%n", "component", "transport", "device");
            MemorySegment listP = arena.allocate(ADDRESS);
            MemorySegment countP = arena.allocate(JAVA_INT);
            check(uct_query_components(listP, countP), "uct_query_components");
            MemorySegment components = listP.get(ADDRESS, 0).reinterpret(ADDRESS.byteSize() * countP.get(JAVA_INT, 0));
            try {
                for (int i = 0; i < countP.get(JAVA_INT, 0); i++) {
                    printComponent(arena, components.getAtIndex(ADDRESS, i));
                }
            } finally {
                uct_release_component_list(listP.get(ADDRESS, 0));
            }
        }
    }

    private static void printComponent(Arena arena, MemorySegment component) {
        MemorySegment attr = uct_component_attr.allocate(arena);
        uct_component_attr.field_mask(attr, UCT_COMPONENT_ATTR_FIELD_NAME() | UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT());
        check(uct_component_query(component, attr), "uct_component_query");
        int mdCount = uct_component_attr.md_resource_count(attr);
        MemorySegment mds = uct_md_resource_desc.allocateArray(Math.max(1, mdCount), arena);
        uct_component_attr.md_resources(attr, mds);
        uct_component_attr.field_mask(attr, UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES());
        check(uct_component_query(component, attr), "uct_component_query");
        String componentName = uct_component_attr.name(attr).getString(0);
        for (int m = 0; m < mdCount; m++) {
            MemorySegment mdName = uct_md_resource_desc.md_name(uct_md_resource_desc.asSlice(mds, m));
            MemorySegment configP = arena.allocate(ADDRESS);
            if (uct_md_config_read(component, MemorySegment.NULL, MemorySegment.NULL, configP) != UCS_OK()) {
                continue;
            }
            MemorySegment mdP = arena.allocate(ADDRESS);
            byte opened = uct_md_open(component, mdName, configP.get(ADDRESS, 0), mdP);
            uct_config_release(configP.get(ADDRESS, 0));
            if (opened != UCS_OK()) {
                continue;
            }
            MemorySegment md = mdP.get(ADDRESS, 0);
            MemorySegment resourcesP = arena.allocate(ADDRESS);
            MemorySegment countP = arena.allocate(JAVA_INT);
            if (uct_md_query_tl_resources(md, resourcesP, countP) == UCS_OK()) {
                int n = countP.get(JAVA_INT, 0);
                MemorySegment resources = uct_tl_resource_desc.reinterpret(resourcesP.get(ADDRESS, 0), Math.max(1, n),
                        arena, null);
                for (int t = 0; t < n; t++) {
                    MemorySegment r = uct_tl_resource_desc.asSlice(resources, t);
                    System.out.printf("%-12s %-12s %s%n", componentName,
                            uct_tl_resource_desc.tl_name(r).getString(0), uct_tl_resource_desc.dev_name(r).getString(0));
                }
                uct_release_tl_resource_list(resourcesP.get(ADDRESS, 0));
            }
            uct_md_close(md);
        }
    }

    private static void check(byte status, String call) {
        if (status != UCS_OK()) {
            throw new IllegalStateException(call + " failed: " + ucs_status_string(status).reinterpret(256).getString(0));
        }
    }
}
